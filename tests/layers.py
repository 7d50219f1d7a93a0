#!/usr/bin/env python3
"""The layering rules the compiler cannot hold by itself, checked over the source: no cycle
between files (a file's arrows are its `crate::`, `super::`, `self::`, `pidx_core::` and
`pidx_team::` paths, outside test modules; a folder's `mod.rs` and its own files are one
unit), no front door (cli, pick, mcp, web) or the presentation importing a front door, and
no import from query, store or pi into ingest.
Crate boundaries (core < team < binary) are the compiler's. Run by .ci/run:
    python3 tests/layers.py
"""
import os,re,sys,collections
roots={'src':'pidx','crates/core/src':'pidx_core','crates/team/src':'pidx_team'}
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
mods={}  # module path tuple -> file
for root,crate in roots.items():
    for dp,dn,fn in os.walk(root):
        for f in fn:
            if not f.endswith('.rs'): continue
            p=os.path.join(dp,f); rel=os.path.relpath(p,root)[:-3].split('/')
            if rel[-1]=='mod' or rel[-1]=='lib' or rel[-1]=='main': rel=rel[:-1]
            if rel==[] and f=='main.rs': rel=['<main>']
            mods[(crate,)+tuple(rel)]=p
alias={'pidx':{'app':'pidx_core','error':'pidx_core','ingest':'pidx_core','meaning':'pidx_core','pi':'pidx_core','query':'pidx_core','redact':'pidx_core','store':'pidx_core','term':'pidx_core','team':'pidx_team'}}
def resolve(crate,path):
    # longest prefix that is a module
    if crate=='pidx' and path and path[0] in alias['pidx']:
        c=alias['pidx'][path[0]]
        if c=='pidx_team': return resolve(c,path[1:])
        crate=c
    for i in range(len(path),-1,-1):
        k=(crate,)+tuple(path[:i])
        if k in mods: return k
    return None
edges=collections.defaultdict(set)
for k,p in mods.items():
    crate=k[0]; me=list(k[1:])
    src=open(p).read()
    src=re.sub(r'//[^\n]*','',src)
    # cut test modules, and single items only tests use (a `#[cfg(test)] use ...;` near the top
    # must not hide the file's real imports after it)
    src=re.sub(r'#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))?\s+)?use\b[^;]*;','',src)
    m=re.search(r'#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))?\s+)?mod\b',src)
    if m: src=src[:m.start()]
    isdir=p.endswith('mod.rs') or p.endswith('lib.rs')
    for m in re.finditer(r'\b(crate|super|pidx_core|pidx_team|self)((?:::[a-z_][a-z0-9_]*)+)',src):
        head=m.group(1); parts=m.group(2).strip(':').split('::')
        if head=='crate': t=resolve(crate,parts)
        elif head in('pidx_core','pidx_team'): t=resolve(head,parts)
        elif head=='self':
            base=me if isdir else me[:-1]
            t=resolve(crate,base+parts) if isdir else None
            if not isdir: t=resolve(crate,me+parts)
        else:
            base=me[:-1] if isdir else me[:-1]
            if not isdir: base=me[:-1]
            else: base=me[:-1]
            t=resolve(crate,base+parts)
        if t and t!=k: edges[k].add(t)
    # `use sibling::` via `mod x;` in mod.rs isn't an edge (parent->child)
# drop parent<->child edges
def is_anc(a,b): return a[0]==b[0] and len(a)<len(b) and b[:len(a)]==a
E={k:{t for t in v if not is_anc(k,t) and not is_anc(t,k)} for k,v in edges.items()}
# tarjan
idx={};low={};st=[];on=set();sccs=[];c=[0]
sys.setrecursionlimit(10000)
def sc(v):
    idx[v]=low[v]=c[0];c[0]+=1;st.append(v);on.add(v)
    for w in E.get(v,()):
        if w not in idx: sc(w);low[v]=min(low[v],low[w])
        elif w in on: low[v]=min(low[v],idx[w])
    if low[v]==idx[v]:
        comp=[]
        while True:
            w=st.pop();on.discard(w);comp.append(w)
            if w==v:break
        if len(comp)>1: sccs.append(comp)
for v in mods:
    if v not in idx: sc(v)
bad = []
for s in sccs:
    bad.append('cycle: ' + ' <-> '.join(sorted('/'.join(x) for x in s)))
doors = {'cli', 'pick', 'mcp', 'web'}
for k, ts in edges.items():
    for t in ts:
        if k[0] == 'pidx' and t[0] == 'pidx' and len(k) > 1 and len(t) > 1:
            a, b = k[1], t[1]
            if a != b and b in doors and (a in doors or a == 'present'):
                bad.append(f"front door arrow: {'/'.join(k)} -> {'/'.join(t)}")
# The engine's lower floors read the index and pi's files; ingest writes the index from disk.
# Nothing below ingest may reach up into it (a constant both need belongs to the lower one).
below_ingest = {'query', 'store', 'pi'}
for k, ts in edges.items():
    for t in ts:
        if k[0] == 'pidx_core' and t[0] == 'pidx_core' and len(k) > 1 and len(t) > 1:
            if k[1] in below_ingest and t[1] == 'ingest':
                bad.append(f"upward arrow into ingest: {'/'.join(k)} -> {'/'.join(t)}")
for b in bad:
    print(b)
print(f"layers.py: {len(mods)} modules, {sum(len(v) for v in E.values())} arrows between files, {len(bad)} problems")
sys.exit(1 if bad else 0)
