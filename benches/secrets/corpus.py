#!/usr/bin/env python3
"""Ordinary code and prose, none of it written here, as pi sessions, each file the text of one
`read` tool result. `pidx secrets` over these sessions counts false positives (run.py).

Two sets: `old` is every `.py` of the Python standard library on this machine (its test
suite's data folders left out) and the sources of the crates in the cargo registry (`.rs`,
`.md`, `.toml`); `new`, added as a second held-out body, is the JavaScript/TypeScript and
Markdown of npm packages unpacked on the machine (node_modules folders, each file once) and
Debian's package docs (`/usr/share/doc`, `.gz` files read unpacked). For `new` the npm
packages read (name and version) are listed in `OUT.packages.tsv`.

The files are split by a hash of their path into `tune` (looked at while changing the rules)
and `report` (measured once for the numbers in docs/secrets.md); in the `new` set each is a
quarter and the other half (`spare`) is written only when asked for (`--half spare`), for a
held-out run.

usage: corpus.py --out DIR [--set old|new|fresh|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|fourteenth]
                 [--half tune|report|spare|all] [--python DIR] [--cargo DIR] [--npm DIR[:DIR...]]
                 [--doc DIR] [--dir DIR]
"""

import argparse
import gzip
import hashlib
import json
import os
import sys
import uuid

EXTS_CARGO = (".rs", ".md", ".toml")
EXTS_NPM = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".md")
# pi's `read` returns at most 2,000 lines or 50 KB a call: a bundle of megabytes never reaches
# a transcript whole, so files above this size (minified bundles) are left out.
MAX_NPM_FILE = 1 << 20
NPM_DEFAULT = ":".join(["/usr/lib/node_modules",
                        os.path.expanduser("~/.cache/pidx-test/openclaw/oc-2026.9.6/node_modules")])
PER_SESSION = 4 << 20  # bytes of text per session file
# Set `fresh` (fourth round): code nobody here had scanned, read once as a held-out body, whole
# (no halves): Google's Cloud SDK Python (`googlecloudsdk`, not its bundled third-party code),
# Perl's core library and the C headers of the machine's -dev packages.
FRESH_DEFAULT = [("gcloud", "/usr/lib/google-cloud-sdk/lib/googlecloudsdk", (".py",)),
                 ("perl", "/usr/share/perl/5.36", (".pm", ".pl", ".pod")),
                 ("include", "/usr/include", (".h", ".hpp", ".hh", ".hxx", ".inc", ".def"))]

# Set `fifth` (fifth round): code nobody here had scanned, installed for it from Debian
# (`golang-1.19-src`, `libruby3.1`, `ruby-rails`, `python3-django`) and read once as a held-out
# body, whole: Go's standard library (its `testdata` fixtures left out, its tests kept), Ruby's
# standard library and gems with Rails, and Django; code full of tokens, secrets and passwords
# by name (CSRF, sessions, password hashers, TLS).
FIFTH_DEFAULT = [("go", "/usr/share/go-1.19/src", (".go",)),
                 ("ruby", "/usr/lib/ruby", (".rb", ".erb")),
                 ("rails", "/usr/share/rubygems-integration/all/gems", (".rb", ".erb", ".md")),
                 ("django", "/usr/lib/python3/dist-packages/django", (".py", ".html", ".txt"))]
# Set `sixth` (sixth round): the same, after the rules were changed on `fifth`: the Java class
# library's sources (`openjdk-17-source`: its `src.zip`, unpacked next to the output) and the
# PHP of `/usr/share/php` (Symfony, `php-symfony` and what it pulls in).
SIXTH_DEFAULT = [("java", "/usr/lib/jvm/openjdk-17/lib/src.zip", (".java",)),
                 ("php", "/usr/share/php", (".php", ".md"))]
# Set `seventh` (seventh round): the same again, generated before the seventh round's rules were
# changed and run once after: Erlang/OTP's sources (`erlang-src`: ssl, ssh, crypto, inets...),
# the Perl modules of /usr/share/perl5 (`libmojolicious-perl`, `libcatalyst-perl`,
# `libdancer2-perl`, `libwww-perl` and what they pull in) and Python's Twisted, Flask and
# Werkzeug (`python3-twisted`, `python3-flask`, `python3-werkzeug`), and Emacs's Lisp
# (`emacs-el`: its `.el.gz` sources, read unpacked; Gnus, auth-source, url, tramp...).
SEVENTH_DEFAULT = [("erlang", "/usr/lib/erlang/lib", (".erl", ".hrl")),
                   ("perl5", "/usr/share/perl5", (".pm", ".pl", ".pod")),
                   ("twisted", "/usr/lib/python3/dist-packages/twisted", (".py",)),
                   ("flask", "/usr/lib/python3/dist-packages/flask", (".py",)),
                   ("werkzeug", "/usr/lib/python3/dist-packages/werkzeug", (".py",)),
                   ("emacs", "/usr/share/emacs/28.2/lisp", (".el.gz",))]
# Set `eighth` (eighth round): the same again, generated before the eighth round's rules were
# changed and run once after: Ansible (`ansible-core` and, of the `ansible` package's
# collections, `community.*`, `amazon.*`, `google.*` and `openstack.*`: modules whose docs and
# examples are full of passwords, tokens and keys by name), Go libraries' sources
# (`/usr/share/gocode/src`: `golang-golang-x-crypto-dev`, `golang-golang-x-net-dev`, the MySQL
# and PostgreSQL drivers and what they pull in), Tcl's tcllib, OCaml's standard library
# (`ocaml-nox`, its `.ml .mli`) and Lua's Penlight.
COLLECTIONS = "/usr/lib/python3/dist-packages/ansible_collections/"
ANSIBLE_EXTS = (".py", ".yml", ".yaml", ".md")
EIGHTH_DEFAULT = [("ansible", "/usr/lib/python3/dist-packages/ansible", ANSIBLE_EXTS),
                  ("ansible-community", COLLECTIONS + "community", ANSIBLE_EXTS),
                  ("ansible-amazon", COLLECTIONS + "amazon", ANSIBLE_EXTS),
                  ("ansible-google", COLLECTIONS + "google", ANSIBLE_EXTS),
                  ("ansible-openstack", COLLECTIONS + "openstack", ANSIBLE_EXTS),
                  ("gocode", "/usr/share/gocode/src", (".go",)),
                  ("tcllib", "/usr/share/tcltk/tcllib1.21", (".tcl",)),
                  ("ocaml", "/usr/lib/ocaml", (".ml", ".mli")),
                  ("lua", "/usr/share/lua", (".lua",))]
# Set `ninth` (ninth round): the same again, generated and run once with main's rules before the
# ninth round's rules were changed: AWS's SDK for Python (`python3-botocore`: its service
# models' JSON, docs full of example keys, files above 1 MB left out as for every body;
# `python3-boto3`, `python3-s3transfer`), `python3-paramiko` (SSH), the Kubernetes client
# (`python3-kubernetes`), Google's and OpenStack's auth libraries (`python3-google-auth`,
# `python3-requests-oauthlib`, `python3-keystoneclient`, `python3-keystoneauth1`) and the
# Node.js modules of /usr/share/nodejs (`node-express`, `node-passport`, `node-cookies`,
# `node-aws4`, `node-oauth-1.0a`... and what they pull in: Babel, core-js, lodash...).
# 13,512 files, 116.9 MB; held out with main's rules (8b2d357): 102 findings = 87.23 per
# 100 MB, most of them AWS's documented `...EXAMPLE` key ids, botocore's `examples-1.json`
# and doctests (docs/secrets.md, ninth round).
DIST = "/usr/lib/python3/dist-packages/"
NINTH_DEFAULT = [("botocore", DIST + "botocore", (".py", ".json")),
                 ("boto3", DIST + "boto3", (".py", ".json")),
                 ("s3transfer", DIST + "s3transfer", (".py",)),
                 ("paramiko", DIST + "paramiko", (".py",)),
                 ("kubernetes", DIST + "kubernetes", (".py", ".md")),
                 ("google-auth", DIST + "google/auth", (".py",)),
                 ("google-oauth2", DIST + "google/oauth2", (".py",)),
                 ("requests-oauthlib", DIST + "requests_oauthlib", (".py",)),
                 ("keystoneclient", DIST + "keystoneclient", (".py",)),
                 ("keystoneauth1", DIST + "keystoneauth1", (".py",)),
                 ("nodejs", "/usr/share/nodejs", EXTS_NPM)]
# Set `tenth` (tenth round): the same again, generated and run once with main's rules before the
# tenth round's rules were changed, from Debian packages that are not installed but downloaded
# (`apt-get download` of TENTH_DEBS into the folder PIDX_TENTH_DEBS, default
# ~/.cache/pidx-test/tenth-debs) and unpacked by this script with `dpkg-deb -x` into its `root`
# folder (symbolic links left out: they point into the machine's own files): Python clients
# full of credentials by name (Docker, Vault's `hvac`, Google's API client, LDAP, Impacket's
# SMB/Kerberos, passlib, MSAL, Authlib, OpenStack's SDK, social-auth, SAML, JOSE/JWT, boto 2,
# libcloud, oauthlib, keyring) and PHP web applications with their JavaScript, templates, SQL and
# language files (Roundcube and its plugins, phpMyAdmin, Tiny Tiny RSS, Icinga Web 2, DokuWiki).
# 9,551 files, 70.0 MB; held out with main's rules (b7843f1): 56 findings = 79.97 per 100 MB,
# most of them RFC 6749/5849 example tokens in OAuth libraries' docstrings (docs/secrets.md,
# tenth round).
TENTH_DEBS = ("python3-docker python3-hvac python3-googleapi python3-ldap3 python3-impacket "
              "python3-passlib python3-msal python3-authlib python3-openstacksdk "
              "python3-social-auth-core python3-pysaml2 python3-jose python3-jwcrypto python3-boto "
              "python3-libcloud python3-jwt python3-oauthlib python3-keyring roundcube-core "
              "roundcube-plugins phpmyadmin tt-rss icingaweb2 dokuwiki").split()
TENTH_DEBS_DIR = os.environ.get("PIDX_TENTH_DEBS", os.path.expanduser("~/.cache/pidx-test/tenth-debs"))
TENTH_PY = (".py", ".json", ".yml", ".yaml", ".txt", ".rst", ".cfg")
TENTH_PHP = (".php", ".inc", ".js", ".twig", ".phtml", ".html", ".dist", ".sample", ".sql", ".txt",
             ".md", ".json", ".yml", ".ini")
TENTH_DEFAULT = [(name, "usr/lib/python3/dist-packages/" + name, TENTH_PY)
                 for name in ("docker", "hvac", "googleapiclient", "ldap3", "impacket", "passlib",
                              "msal", "authlib", "openstack", "social_core", "saml2", "jose",
                              "jwcrypto", "boto", "libcloud", "jwt", "oauthlib", "keyring")] + \
                [(name, "usr/share/" + name, TENTH_PHP)
                 for name in ("roundcube", "phpmyadmin", "tt-rss", "icingaweb2", "dokuwiki")]
# Set `eleventh` (eleventh round): the same again, generated and run once with main's rules
# before the eleventh round's rules were changed, from Debian packages downloaded as for `tenth`
# (ELEVENTH_DEBS into PIDX_ELEVENTH_DEBS, default ~/.cache/pidx-test/eleventh-debs), none of them
# installed on the machine nor read by an earlier set (the `fifth`, `eighth` and `ninth` sets read
# whatever was installed under /usr/lib/ruby, /usr/share/gocode and /usr/share/nodejs; these
# packages were not): Go libraries for credentials, cloud and HTTP (`/usr/share/gocode/src`:
# AWS's SDK with only its core and the services listed in AWS_SERVICES, x/oauth2, go-oidc,
# go-jose, golang-jwt and jwt-go, MinIO, Gophercloud, go-ldap, goth, Docker's credential helpers
# and engine, go-github, go-gitlab, godo, go-tfe, Azure's autorest and blob storage, Google
# Cloud, containers/image, go-git, the Aliyun OSS SDK, otp, webauthn, go-imap/smtp, the MS SQL
# and pgx drivers, etcd's server), Ruby gems for the same (`/usr/lib/ruby/vendor_ruby`,
# `/usr/share/rubygems-integration`: the AWS SDK v1 and v3 core, fog with AWS, Google and
# OpenStack, OmniAuth, ruby-saml, OAuth 1 and 2, JWT, Devise, Doorkeeper, Rack::OAuth2,
# OpenID Connect, net-ldap, net-ssh, Faraday, HTTParty, httpclient, rest-client, Excon,
# Mechanize, Octokit, the GitLab client, WebAuthn, ROTP, googleauth, Signet, kubeclient, Warden,
# bcrypt, Azure blob storage) and Node.js modules (`/usr/share/nodejs`: axios, got, jose,
# request, http-signature, sshpk, tough-cookie, ws, superagent, the MySQL, PostgreSQL, Redis and
# LDAP clients, hawk, undici). Go files above 1 MB (most of AWS's generated `api.go`) are left
# out as in every body.
ELEVENTH_DEBS = ("golang-github-aws-aws-sdk-go-dev golang-golang-x-oauth2-dev "
                 "golang-golang-x-oauth2-google-dev golang-github-coreos-go-oidc-dev "
                 "golang-gopkg-square-go-jose.v2-dev golang-github-golang-jwt-jwt-dev "
                 "golang-github-dgrijalva-jwt-go-dev golang-github-minio-minio-go-v7-dev "
                 "golang-github-gophercloud-gophercloud-dev golang-github-go-ldap-ldap-dev "
                 "golang-github-markbates-goth-dev golang-github-docker-docker-credential-helpers-dev "
                 "golang-github-google-go-github-dev golang-github-azure-go-autorest-dev "
                 "golang-github-azure-azure-storage-blob-go-dev golang-github-emersion-go-imap-dev "
                 "golang-github-emersion-go-smtp-dev golang-github-xanzy-go-gitlab-dev "
                 "golang-github-digitalocean-godo-dev golang-github-containers-image-dev "
                 "golang-github-docker-docker-dev golang-google-cloud-dev golang-github-go-git-go-git-dev "
                 "golang-github-hashicorp-go-tfe-dev golang-github-aliyun-aliyun-oss-go-sdk-dev "
                 "golang-github-pquerna-otp-dev golang-github-duo-labs-webauthn-dev "
                 "golang-github-denisenkom-go-mssqldb-dev golang-github-jackc-pgx-v4-dev "
                 "golang-etcd-server-dev "
                 "ruby-aws-sdk ruby-aws-sdk-core ruby-aws-sigv4 ruby-fog-aws ruby-fog-core "
                 "ruby-fog-openstack ruby-fog-google ruby-omniauth ruby-omniauth-oauth2 "
                 "ruby-omniauth-github ruby-omniauth-saml ruby-saml ruby-oauth2 ruby-oauth ruby-jwt "
                 "ruby-json-jwt ruby-devise ruby-doorkeeper ruby-rack-oauth2 ruby-openid-connect "
                 "ruby-net-ldap ruby-net-ssh ruby-faraday ruby-httparty ruby-httpclient ruby-rest-client "
                 "ruby-excon ruby-mechanize ruby-octokit ruby-gitlab ruby-webauthn ruby-rotp "
                 "ruby-googleauth ruby-signet ruby-kubeclient ruby-warden ruby-bcrypt "
                 "ruby-azure-storage-blob "
                 "node-axios node-got node-jose node-request node-http-signature node-sshpk "
                 "node-tough-cookie node-ws node-superagent node-mysql node-pg node-redis node-ldapjs "
                 "node-hawk node-undici").split()
ELEVENTH_DEBS_DIR = os.environ.get("PIDX_ELEVENTH_DEBS",
                                   os.path.expanduser("~/.cache/pidx-test/eleventh-debs"))
# AWS's SDK for Go has ~300 services (119 MB below 1 MB a file): these are the ones about
# identity, secrets, keys, storage and the commonest endpoints.
AWS_SDK_SERVICES = "github.com/aws/aws-sdk-go/service/"
AWS_SERVICES = ("sts iam s3 secretsmanager kms ssm cognitoidentity cognitoidentityprovider sso "
                "ssooidc ecr acm codecommit lambda rds ec2 eks apigateway cloudfront ses sns sqs "
                "dynamodb route53 elasticache redshift organizations directoryservice").split()
ELEVENTH_GO = (".go", ".md", ".json", ".yaml", ".yml")
ELEVENTH_RUBY = (".rb", ".erb", ".md", ".yml", ".yaml", ".json")
ELEVENTH_DEFAULT = [("gocode", "usr/share/gocode/src", ELEVENTH_GO),
                    ("ruby", "usr/lib/ruby", ELEVENTH_RUBY),
                    ("gems", "usr/share/rubygems-integration", ELEVENTH_RUBY),
                    ("ruby-aws-sdk", "usr/share/ruby-aws-sdk", ELEVENTH_RUBY),
                    ("ruby-doorkeeper", "usr/share/ruby-doorkeeper", ELEVENTH_RUBY),
                    ("nodejs", "usr/share/nodejs", EXTS_NPM),
                    ("javascript", "usr/share/javascript", EXTS_NPM)]
# The sets read from downloaded packages: (package names, their folder, the parts to read).
DEB_SETS = {"tenth": (TENTH_DEBS, TENTH_DEBS_DIR, TENTH_DEFAULT),
            "eleventh": (ELEVENTH_DEBS, ELEVENTH_DEBS_DIR, ELEVENTH_DEFAULT)}
# Set `fourteenth` (fourteenth round): registry packages nobody here had scanned, downloaded
# with the registries' own clients (`pip download --no-deps --only-binary :all:` of PyPI wheels,
# `npm pack` of npm tarballs) and unpacked, one folder a package (`pypi-NAME-VERSION`,
# `npm-NAME-VERSION`), under `--dir` (default PIDX_FOURTEENTH_DIR, else
# ~/.cache/pidx-test/fourteenth); the folders read are listed in `OUT.packages.tsv`, and the
# downloads (registry, name, version, file, sha256) in a manifest kept beside the folder
# (docs/secrets.md, fourteenth round). Unlike the fourth to eleventh rounds'
# bodies it has halves, `tune` and `report`, by a hash of each file's path, as set `old`.
FOURTEENTH_DIR = os.environ.get("PIDX_FOURTEENTH_DIR",
                                os.path.expanduser("~/.cache/pidx-test/fourteenth"))
FOURTEENTH_EXTS = (".py", ".pyi", ".md", ".rst", ".txt", ".cfg", ".ini", ".toml", ".json", ".yml",
                   ".yaml") + EXTS_NPM
HELD_OUT_WHOLE = ("fresh", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh")


def unzipped(archive, exts, into):
    """The members of `archive` ending in `exts`, unpacked once under `into` (a folder)."""
    import zipfile
    if not os.path.isdir(into):
        with zipfile.ZipFile(archive) as z:
            for m in z.namelist():
                if m.endswith(exts) and ".." not in m.split("/"):
                    z.extract(m, into)
    return into


def python_files(root):
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        # The test suite's data folders hold fixtures made to look odd, not ordinary code.
        dirs[:] = sorted(x for x in dirs if not (rel.startswith("test") and "data" in x)
                         and x not in ("__pycache__", "site-packages", "dist-packages"))
        for f in sorted(files):
            if f.endswith(".py"):
                yield os.path.join(d, f)


def cargo_files(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in ("target", ".git"))
        for f in sorted(files):
            if f.endswith(EXTS_CARGO):
                yield os.path.join(d, f)


def npm_files(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in (".git", ".bin"))
        for f in sorted(files):
            p = os.path.join(d, f)
            if f.endswith(EXTS_NPM) and not f.endswith(".min.js") and os.path.getsize(p) <= MAX_NPM_FILE:
                yield p


def ext_files(exts):
    def walk(root):
        for d, dirs, files in os.walk(root):
            # `testdata`: Go's fixtures, made to look odd (as the `old` set leaves Python's out)
            dirs[:] = sorted(x for x in dirs if x not in ("__pycache__", ".git", "testdata"))
            for f in sorted(files):
                p = os.path.join(d, f)
                if f.endswith(exts) and os.path.isfile(p) and os.path.getsize(p) <= MAX_NPM_FILE:
                    yield p
    return walk


def unpacked_debs(names, debs):
    """The packages `names`' files in the folder `debs`, unpacked once into `debs/root`; with
    the (package, version) of each."""
    import glob
    import subprocess
    into = os.path.join(debs, "root")
    found = []
    for name in names:
        files = sorted(glob.glob(os.path.join(debs, name + "_*.deb")))
        if not files:
            print(f"corpus.py: no {name}_*.deb in {debs} (apt-get download {name})", file=sys.stderr)
            continue
        meta = subprocess.run(["dpkg-deb", "-f", files[-1], "Package", "Version"],
                              capture_output=True, text=True, check=True).stdout.split("\n")
        found.append((files[-1], meta[0].split(": ", 1)[1], meta[1].split(": ", 1)[1]))
    if not os.path.isdir(into):
        os.makedirs(into + ".part", exist_ok=True)
        for deb, _, _ in found:
            subprocess.run(["dpkg-deb", "-x", deb, into + ".part"], check=True)
        os.rename(into + ".part", into)
    return into, [(p, v) for _, p, v in found]


def no_links(walk):
    """`walk` without symbolic links (an unpacked package's point into the machine's files)."""
    def w(root):
        return (p for p in walk(root) if not os.path.islink(p))
    return w


def aws_services_only(walk):
    """`walk` with only AWS_SERVICES of AWS's SDK for Go (its core and the rest kept)."""
    def w(root):
        for p in walk(root):
            rel = os.path.relpath(p, root)
            if rel.startswith(AWS_SDK_SERVICES) and rel[len(AWS_SDK_SERVICES):].split("/")[0] not in AWS_SERVICES:
                continue
            yield p
    return w


def dpkg_owners(root):
    """(package, version) of each Debian package owning files under root (dpkg's database)."""
    import subprocess
    r = subprocess.run(["dpkg-query", "-S", root], capture_output=True, text=True)
    # each line is `pkg[:arch], pkg[:arch]...: path`
    names = sorted({n.strip().split(":")[0] for line in r.stdout.splitlines()
                    for n in line.rsplit(": ", 1)[0].split(",")})
    for n in names:
        v = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", n], capture_output=True, text=True)
        yield n, v.stdout.strip() or "?"


def doc_files(root):
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            yield os.path.join(d, f)


def npm_packages(root):
    """(name, version) of every package.json under root that names both."""
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in (".git", ".bin"))
        if "package.json" in files:
            try:
                meta = json.load(open(os.path.join(d, "package.json"), encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(meta, dict) and meta.get("name") and meta.get("version"):
                yield meta["name"], str(meta["version"])


def read_text(path, skip_binary):
    """The file's text (a `.gz` unpacked), or None for an unreadable file or, with
    `skip_binary`, one holding a NUL byte early (the `old` set was measured without that
    check, so it keeps its bytes)."""
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                raw = f.read()
        else:
            with open(path, "rb") as f:
                raw = f.read()
    except (OSError, EOFError, gzip.BadGzipFile):
        return None
    if skip_binary and b"\0" in raw[:8192]:
        return None
    return raw.decode("utf-8", errors="replace")


def half_of(path, cset="old"):
    """`tune` or `report` (or, in the `new` set, `spare`): the `new` set is ~470 MB, so a
    quarter is tuned on, a quarter reported, and half kept unread for a later held-out run."""
    b = hashlib.sha1(path.encode()).digest()[0]
    if cset == "new":
        return ("tune", "report", "spare", "spare")[b % 4]
    return "tune" if b % 2 == 0 else "report"


class Writer:
    def __init__(self, out, cwd):
        self.out, self.cwd, self.n, self.f, self.size = out, cwd, 0, None, 0
        self.t = 1767225600000  # 2026-01-01T00:00:00Z
        self.parent = None

    def iso(self):
        self.t += 1000
        s, ms = divmod(self.t, 1000)
        import time
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + ".%03dZ" % ms

    def line(self, obj):
        self.f.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")

    def open(self):
        self.n += 1
        sid = str(uuid.UUID(int=self.n, version=4))
        d = os.path.join(self.out, "--" + self.cwd.strip("/").replace("/", "-") + "--")
        os.makedirs(d, exist_ok=True)
        ts = self.iso()
        self.f = open(os.path.join(d, ts.replace(":", "-").replace(".", "-", 1) + "_" + sid + ".jsonl"),
                      "w", encoding="utf-8")
        self.line({"type": "session", "version": 3, "id": sid, "timestamp": ts, "cwd": self.cwd})
        self.size, self.parent = 0, None

    def entry(self, message):
        eid = "%08x" % ((self.n << 20) + self.size % (1 << 20) + len(message.get("role", "")) + self.t % 997)
        eid = hashlib.sha1(("%d/%d" % (self.n, self.t)).encode()).hexdigest()[:8]
        ts = self.iso()
        message["timestamp"] = self.t
        self.line({"type": "message", "id": eid, "parentId": self.parent, "timestamp": ts, "message": message})
        self.parent = eid

    def add(self, path, text):
        if self.f is None or self.size > PER_SESSION:
            if self.f:
                self.f.close()
            self.open()
            self.entry({"role": "user", "content": "Read the sources under " + self.cwd + " and summarise them."})
        call = "toolu_" + hashlib.sha1(path.encode()).hexdigest()[:24]
        self.entry({"role": "assistant", "content": [{"type": "toolCall", "id": call, "name": "read",
                                                      "arguments": {"path": path}}],
                    "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                    "usage": {"input": 10, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 20,
                              "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                    "stopReason": "toolUse"})
        self.entry({"role": "toolResult", "toolCallId": call, "toolName": "read",
                    "content": [{"type": "text", "text": text}], "isError": False})
        self.size += len(text.encode())

    def close(self):
        if self.f:
            self.f.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--set", default="old", choices=("old", "new", "fresh", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
                                           "eleventh", "fourteenth"))
    ap.add_argument("--half", default="all", choices=("tune", "report", "spare", "all"),
                    help="spare: the `new` set's unread half, for a held-out run (docs/secrets.md)")
    ap.add_argument("--python", default="/usr/lib/python3.11")
    ap.add_argument("--cargo", default=os.path.expanduser("~/.cargo/registry/src"))
    ap.add_argument("--npm", default=NPM_DEFAULT, help="node_modules folders, `:` between them")
    ap.add_argument("--doc", default="/usr/share/doc")
    ap.add_argument("--dir", default=FOURTEENTH_DIR,
                    help="set fourteenth: the unpacked packages, one folder each")
    a = ap.parse_args()
    if a.half == "spare" and a.set != "new":
        sys.exit("corpus.py: only the `new` set has a spare half")
    if a.set in HELD_OUT_WHOLE and a.half != "all":
        sys.exit(f"corpus.py: the `{a.set}` set has no halves (it is read whole, once)")
    archives = {}  # an unpacked folder -> its archive
    debs = []
    if a.set in DEB_SETS:
        names, folder, roots = DEB_SETS[a.set]
        into, debs = unpacked_debs(names, folder)
        parts = [(name, os.path.join(into, rel), no_links(ext_files(exts))) for name, rel, exts in roots]
        if a.set == "eleventh":
            parts = [(n, r, aws_services_only(w) if n == "gocode" else w) for n, r, w in parts]
    elif a.set == "fourteenth":
        if not os.path.isdir(a.dir):
            print(f"corpus.py: {a.dir} is missing (set fourteenth: docs/secrets.md, fourteenth "
                  "round, says how to fill it)", file=sys.stderr)
        names = sorted(os.listdir(a.dir)) if os.path.isdir(a.dir) else []
        parts = [(name, os.path.join(a.dir, name), ext_files(FOURTEENTH_EXTS))
                 for name in names if os.path.isdir(os.path.join(a.dir, name))]
    elif a.set == "old":
        parts = [("python", a.python, python_files), ("cargo", a.cargo, cargo_files)]
    elif a.set in HELD_OUT_WHOLE:
        roots = {"fresh": FRESH_DEFAULT, "fifth": FIFTH_DEFAULT, "sixth": SIXTH_DEFAULT,
                 "seventh": SEVENTH_DEFAULT, "eighth": EIGHTH_DEFAULT,
                 "ninth": NINTH_DEFAULT}[a.set]
        parts = []
        for name, root, exts in roots:
            if root.endswith(".zip") and os.path.isfile(root):
                folder = unzipped(root, exts, a.out.rstrip("/") + ".unzipped/" + name)
                archives[folder] = root
                root = folder
            parts.append((name, root, ext_files(exts)))
    else:
        parts = [("npm", r, npm_files) for r in a.npm.split(":") if r] + [("doc", a.doc, doc_files)]
    total, files, seen, used, writers = 0, 0, set(), [], {}
    for name, root, walk in parts:
        if not os.path.isdir(root):
            print(f"corpus.py: {root} is missing; its part is left out", file=sys.stderr)
            continue
        # the package owns the archive, not the folder it was unpacked into
        used.append((name, archives.get(root, root)))
        # one writer a name: two writers of one cwd would write the same session file names
        w = writers.setdefault(name, Writer(a.out, "/src/" + name))
        for p in walk(root):
            rel = os.path.relpath(p, root)
            if a.half != "all" and half_of(name + "/" + rel, a.set) != a.half:
                continue
            text = read_text(p, a.set != "old")
            if text is None:
                continue
            if a.set != "old":
                # node_modules trees hold the same package file many times over: count it once
                digest = hashlib.sha1(text.encode()).digest()
                if digest in seen:
                    continue
                seen.add(digest)
            w.add(rel, text)
            total += len(text.encode())
            files += 1
    for w in writers.values():
        w.close()
    if a.set in DEB_SETS:
        with open(a.out.rstrip("/") + ".packages.tsv", "w", encoding="utf-8") as f:
            f.write("root\tpackage\tversion\n")
            for pkg, ver in debs:
                f.write(f"{DEB_SETS[a.set][1]}\t{pkg}\t{ver}\n")
    elif a.set in HELD_OUT_WHOLE:
        with open(a.out.rstrip("/") + ".packages.tsv", "w", encoding="utf-8") as f:
            f.write("root\tpackage\tversion\n")
            for name, root in used:
                for pkg, ver in dpkg_owners(root):
                    f.write(f"{root}\t{pkg}\t{ver}\n")
    if a.set == "fourteenth":
        with open(a.out.rstrip("/") + ".packages.tsv", "w", encoding="utf-8") as f:
            f.write("root\tpackage\n")
            for name, root in used:
                f.write(f"{a.dir}\t{name}\n")
    if a.set == "new":
        with open(a.out.rstrip("/") + ".packages.tsv", "w", encoding="utf-8") as f:
            f.write("root\tpackage\tversion\n")
            for name, root in used:
                if name == "npm":
                    for pkg, ver in sorted(set(npm_packages(root))):
                        f.write(f"{root}\t{pkg}\t{ver}\n")
    print(json.dumps({"files": files, "bytes": total, "roots": [r for _, r in used]}))


if __name__ == "__main__":
    main()
