// A throwaway npm registry on 127.0.0.1 (a free port) serving only the npm tarballs in one
// folder (packaging/build.sh's OUT), so `pi install npm:pidx` runs as a user would run it once
// the package is published: npm resolves `pidx`, then the platform package among its
// optionalDependencies, by name and version. Every other name is a 404, as for a package that
// is not published (npm skips an optional dependency it cannot get).
import { createServer } from "node:http";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { join } from "node:path";

/** package/package.json from an npm tarball (tar inside gzip). */
function manifestOf(tgz) {
  const tar = gunzipSync(tgz);
  for (let at = 0; at + 512 <= tar.length; ) {
    const name = tar.subarray(at, at + 100).toString("utf8").replace(/\0.*$/s, "");
    if (!name) break;
    const size = parseInt(tar.subarray(at + 124, at + 136).toString("utf8").replace(/\0.*$/s, "").trim() || "0", 8);
    if (name === "package/package.json") {
      return JSON.parse(tar.subarray(at + 512, at + 512 + size).toString("utf8"));
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  throw new Error("no package/package.json in the tarball");
}

/** Starts the registry over every .tgz in dir; resolves to {url, names, close()}. */
export function startRegistry(dir) {
  const packuments = new Map();
  const files = new Map();
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".tgz"))) {
    const bytes = readFileSync(join(dir, file));
    const pkg = manifestOf(bytes);
    files.set(file, bytes);
    const doc = packuments.get(pkg.name) ?? { name: pkg.name, "dist-tags": {}, versions: {} };
    doc.versions[pkg.version] = {
      ...pkg,
      _id: `${pkg.name}@${pkg.version}`,
      dist: {
        tarball: `/-/files/${file}`,
        shasum: createHash("sha1").update(bytes).digest("hex"),
        integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
      },
    };
    doc["dist-tags"].latest = pkg.version;
    packuments.set(pkg.name, doc);
  }
  return new Promise((resolve) => {
    const server = createServer((req, res) => {
      const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
      if (path.startsWith("/-/files/") && files.has(path.slice(9))) {
        res.writeHead(200, { "content-type": "application/octet-stream" });
        res.end(files.get(path.slice(9)));
        return;
      }
      const doc = packuments.get(path.slice(1));
      if (req.method === "GET" && doc) {
        const base = `http://${req.headers.host}`;
        const abs = structuredClone(doc);
        for (const v of Object.values(abs.versions)) v.dist.tarball = base + v.dist.tarball;
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(abs));
        return;
      }
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"error":"not found"}');
    });
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}/`,
        names: [...packuments.keys()],
        close: () => new Promise((r) => server.close(r)),
      });
    });
  });
}

// `node registry.mjs DIR`: serves DIR, prints its URL on one line, stops when stdin closes (the
// README test runs `npm install -g pidx` against it).
if (import.meta.url === `file://${process.argv[1]}`) {
  const registry = await startRegistry(process.argv[2]);
  process.stdout.write(`${registry.url}\n`);
  process.stdin.resume();
  process.stdin.on("end", () => registry.close().then(() => process.exit(0)));
}
