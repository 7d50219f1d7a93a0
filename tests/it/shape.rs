//! `query::shape` (the compact tree `get_tree` pages through) links every session of the
//! conformance corpus exactly as `query::tree` does, whose JSON equals pi's `getTree`: the same
//! roots, the same children in the same order, the same labels and leaf. The corpus holds the
//! hard cases (duplicate ids, cycles, missing parents, invalid timestamps, labels removed).
//! The shape made from a whole tree (the team server's, for `pidx --pg URL mcp`) is the same.

use crate::common;

use pidx::query::resolve::Resolved;
use pidx::query::shape::{build_shape, id_at, Shape};
use pidx::query::tree::build_tree;

#[test]
fn the_compact_shape_links_every_session_as_pis_tree() {
    let (tmp, root) = common::conformance_copy();
    let (store, _scope) = common::indexed(&root, &tmp.path().join("index.db"));
    let files: Vec<(i64, String)> =
        common::pairs(&store.conn, "SELECT id, path FROM files ORDER BY path");
    assert!(files.len() > 50, "only {} files", files.len());
    let (mut nodes, mut labels, mut forks) = (0, 0, 0);
    for (file_id, path) in files {
        let session = Resolved {
            file_id,
            path,
            source: None,
        };
        let tree = build_tree(&store.conn, &session).unwrap();
        let shape = build_shape(&store.conn, &session).unwrap();
        let at = &session.path;
        assert_eq!(shape.unopenable, tree.unopenable, "{at}");
        assert_eq!(shape.len(), tree.nodes.len(), "{at}");
        assert_eq!(shape.roots, tree.roots, "{at}: roots");
        for (i, node) in tree.nodes.iter().enumerate() {
            assert_eq!(shape.seq[i], node.seq, "{at}: node {i}");
            let kids: Vec<usize> = shape.children(i).collect();
            assert_eq!(kids, node.children, "{at}: children of node {i}");
            forks += usize::from(kids.len() > 1);
            let reachable =
                tree.roots.contains(&i) || tree.nodes.iter().any(|n| n.children.contains(&i));
            if reachable {
                assert_eq!(
                    shape.labels.get(&i),
                    node.label.as_ref(),
                    "{at}: label of node {i}"
                );
                labels += usize::from(node.label.is_some());
            }
            assert_eq!(
                id_at(&store.conn, file_id, node.seq).unwrap(),
                node.id,
                "{at}: id of node {i}"
            );
        }
        let leaf = tree
            .leaf_seq
            .map(|s| tree.nodes.iter().position(|n| n.seq == s).unwrap());
        assert_eq!(shape.leaf, leaf, "{at}: leaf");
        assert!(
            Shape::of_tree(&tree) == shape,
            "{at}: the shape of the whole tree"
        );
        nodes += tree.nodes.len();
    }
    assert!(
        nodes > 500 && labels > 0 && forks > 5,
        "{nodes} nodes, {labels} labels, {forks} forks"
    );
}
