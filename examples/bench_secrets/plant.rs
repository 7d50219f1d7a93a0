//! Planted secrets: for every rule of `pidx::redact`, freshly generated secrets of that kind
//! (random bytes from a seeded generator, never a fixed list), each written the way it turns
//! up in transcripts (an env line, a curl header, a connection string, a config file) and set
//! inside realistic text that also holds look-alikes (commit ids, UUIDs, sha256 digests, base64
//! image data). Shared by `examples/bench_secrets.rs` and the tests of the doors.
#![allow(dead_code)]

use std::io::Write as _;
use std::path::Path;

/// A seeded splitmix64: the same seed plants the same secrets.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
    /// `min` to `min + extra - 1` characters of `alphabet`.
    pub fn chars_upto(&mut self, alphabet: &str, min: usize, extra: usize) -> String {
        let n = min + self.below(extra);
        self.chars(alphabet, n)
    }
    pub fn chars(&mut self, alphabet: &str, n: usize) -> String {
        let a = alphabet.as_bytes();
        (0..n).map(|_| a[self.below(a.len())] as char).collect()
    }
}

const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS: &str = "0123456789";
const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const URLSAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const HEX: &str = "0123456789abcdef";

/// One planted secret: its rule, the secret, and the text holding it (`text[at..at+len]` is
/// the secret).
#[derive(Debug, Clone)]
pub struct Planted {
    pub rule: &'static str,
    pub secret: String,
    /// The secret as it was written (`aws_secret_access_key = …`), without the text around.
    pub written: String,
    pub text: String,
    pub at: usize,
}

fn base64url(bytes: &[u8]) -> String {
    let a = URLSAFE.as_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(a[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// A password of `n` characters as people choose them: letters, digits, some punctuation.
fn password(rng: &mut Rng, n: usize) -> String {
    let mut p = rng.chars(ALNUM, 1);
    p.push_str(&rng.chars(
        "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789!%^*_-~",
        n - 1,
    ));
    p
}

/// A secret of `rule` and the snippet it is written in (`{}` marks where the secret goes).
fn secret_of(rule: &str, rng: &mut Rng) -> (String, String) {
    let r = rng;
    match rule {
        "private-key" => {
            let kind = r.pick(&["RSA ", "OPENSSH ", "EC ", "", "ENCRYPTED "]);
            let mut body = String::new();
            for _ in 0..(3 + r.below(5)) {
                body.push_str(&r.chars(B64, 64));
                body.push('\n');
            }
            let block =
                format!("-----BEGIN {kind}PRIVATE KEY-----\n{body}-----END {kind}PRIVATE KEY-----");
            (block, "{}".into())
        }
        "aws-access-key" => (
            format!(
                "{}{}",
                r.pick(&["AKIA", "ASIA"]),
                r.chars(&format!("{UPPER}{DIGITS}"), 16)
            ),
            r.pick(&[
                "aws_access_key_id = {}",
                "AWS_ACCESS_KEY_ID={}",
                "\"AccessKeyId\": \"{}\",",
            ])
            .into(),
        ),
        "aws-secret-key" => (
            r.chars(B64, 40),
            r.pick(&[
                "aws_secret_access_key = {}",
                "export AWS_SECRET_ACCESS_KEY={}",
                "AWS_SECRET_ACCESS_KEY: {}",
            ])
            .into(),
        ),
        "github-token" => {
            let t = if r.below(3) == 0 {
                format!("github_pat_{}_{}", r.chars(ALNUM, 22), r.chars(ALNUM, 59))
            } else {
                format!(
                    "{}_{}",
                    r.pick(&["ghp", "gho", "ghs", "ghu"]),
                    r.chars(ALNUM, 36)
                )
            };
            (
                t,
                r.pick(&[
                    "git clone https://{}@github.com/acme/api.git",
                    "gh auth login --with-token <<< {}",
                    "token: {}",
                ])
                .into(),
            )
        }
        "gitlab-token" => (
            format!("glpat-{}", r.chars(URLSAFE, 20)),
            r.pick(&[
                "curl --header \"PRIVATE-TOKEN: {}\" https://gitlab.com/api/v4/projects",
                "GITLAB token {} expires soon",
            ])
            .into(),
        ),
        "slack-token" => (
            format!(
                "xox{}-{}-{}-{}",
                r.pick(&["b", "p"]),
                r.chars(DIGITS, 12),
                r.chars(DIGITS, 13),
                r.chars(ALNUM, 24)
            ),
            r.pick(&["client = WebClient(token=\"{}\")", "SLACK bot token is {}"])
                .into(),
        ),
        "slack-webhook" => (
            format!(
                "https://hooks.slack.com/services/T{}/B{}/{}",
                r.chars(&format!("{UPPER}{DIGITS}"), 8),
                r.chars(&format!("{UPPER}{DIGITS}"), 10),
                r.chars(ALNUM, 24)
            ),
            r.pick(&[
                "curl -X POST -d '{\"text\":\"deployed\"}' {}",
                "webhook_url: {}",
            ])
            .into(),
        ),
        "stripe-key" => (
            format!(
                "{}_{}",
                r.pick(&["sk_live", "sk_test", "rk_live"]),
                r.chars_upto(ALNUM, 24, 75)
            ),
            r.pick(&["stripe.api_key = \"{}\"", "Stripe.setApiKey('{}')"])
                .into(),
        ),
        "anthropic-key" => (
            format!("sk-ant-api03-{}AA", r.chars(URLSAFE, 93)),
            r.pick(&[
                "export ANTHROPIC_API_KEY={}",
                "client = Anthropic(api_key=\"{}\")",
                "my key is {} please use it",
            ])
            .into(),
        ),
        "openai-key" => {
            let t = if r.below(2) == 0 {
                format!("sk-proj-{}", r.chars_upto(URLSAFE, 48, 100))
            } else {
                format!("sk-{}", r.chars(ALNUM, 48))
            };
            (
                t,
                r.pick(&[
                    "OpenAI(api_key=\"{}\")",
                    "set OPENAI_API_KEY to {} and retry",
                    "openai.api_key = '{}'",
                ])
                .into(),
            )
        }
        "google-api-key" => (
            format!("AIza{}", r.chars(URLSAFE, 35)),
            r.pick(&[
                "https://maps.googleapis.com/maps/api/geocode/json?address=x&key={}",
                "GOOGLE_MAPS_KEY: {}",
            ])
            .into(),
        ),
        "huggingface-token" => (
            format!("hf_{}", r.chars(ALNUM, 34)),
            r.pick(&["huggingface-cli login --token {}", "HF token {}"])
                .into(),
        ),
        "npm-token" => (
            format!("npm_{}", r.chars(ALNUM, 36)),
            "//registry.npmjs.org/:_authToken={}".into(),
        ),
        "jwt" => {
            let header = base64url(br#"{"alg":"HS256","typ":"JWT"}"#);
            let payload = base64url(
                format!(
                    r#"{{"sub":"{}","iat":{}}}"#,
                    r.chars(DIGITS, 8),
                    1_700_000_000 + r.below(90_000_000)
                )
                .as_bytes(),
            );
            let sig = r.chars(URLSAFE, 43);
            (
                format!("{header}.{payload}.{sig}"),
                r.pick(&[
                    "Authorization: Bearer {}",
                    "access_token={}",
                    "the token {} expired",
                ])
                .into(),
            )
        }
        "url-password" => (
            {
                let n = 10 + r.below(15);
                password(r, n)
            },
            format!(
                "{}://{}:{{}}@{}:{}/{}",
                r.pick(&[
                    "postgres",
                    "postgresql",
                    "mysql",
                    "redis",
                    "amqp",
                    "mongodb+srv",
                    "https"
                ]),
                r.pick(&["app", "admin", "deploy", "svc_api"]),
                r.pick(&[
                    "db.internal",
                    "10.0.3.17",
                    "cluster0.mongodb.net",
                    "localhost"
                ]),
                r.pick(&["5432", "3306", "6379", "5672", "443"]),
                r.pick(&["app", "prod", "queue", "0"])
            ),
        ),
        "env-secret" => (
            format!(
                "{}{}",
                r.chars(ALNUM, 1),
                r.chars_upto(&format!("{URLSAFE}."), 15, 30)
            ),
            format!(
                "{}{}={}",
                r.pick(&["", "export "]),
                r.pick(&[
                    "JWT_SECRET",
                    "SESSION_SECRET",
                    "DB_PASSWORD",
                    "REDIS_PASSWORD",
                    "SENDGRID_API_KEY",
                    "APP_TOKEN",
                    "MAILGUN_APIKEY",
                    "SMTP_PASSWORD",
                    "ENCRYPTION_PASSPHRASE",
                    "CI_DEPLOY_TOKEN"
                ]),
                r.pick(&["{}", "\"{}\"", "'{}'"])
            ),
        ),
        "conn-password" => (
            {
                let n = 10 + r.below(15);
                password(r, n)
            },
            r.pick(&[
                "Server=tcp:sql.internal,1433;Database=app;User ID=admin;Password={};Encrypt=true;",
                "psql \"host=db.internal port=5432 user=app password={} dbname=prod\"",
                "Data Source=db;Initial Catalog=crm;User Id=sa;Pwd={};",
            ])
            .into(),
        ),
        "auth-header" => {
            let template = r.pick(&[
                "curl -H \"Authorization: Bearer {}\" https://api.acme.io/v1/users",
                "curl -H 'Authorization: token {}' https://api.example.org",
                "-H \"x-api-key: {}\"",
                "Authorization: Basic {}",
            ]);
            let token = r.chars_upto(ALNUM, 24, 24);
            // A Basic credential is base64 of `user:password` (RFC 7617), as the detector
            // requires: random characters after `Basic` are a doc's noise.
            let value = if template.contains("Basic") {
                use base64::Engine;
                let user = r.pick(&["deploy", "ci", "admin", "svc-backup"]);
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{token}"))
            } else {
                token
            };
            (value, template.into())
        }
        "cookie" => (
            format!(
                "{}={}; {}={}",
                r.pick(&["session", "sid", "connect.sid", "_gh_sess"]),
                r.chars(ALNUM, 32),
                r.pick(&["csrftoken", "remember_token"]),
                r.chars(HEX, 32)
            ),
            r.pick(&[
                "curl -H 'Cookie: {}' https://app.acme.io/dashboard",
                "curl --cookie \"{}\" https://app.acme.io",
                "Cookie: {}",
            ])
            .into(),
        ),
        "assigned-secret" => (
            r.chars_upto(ALNUM, 20, 20),
            r.pick(&[
                "{\"client_secret\": \"{}\", \"redirect_uri\": \"https://app/cb\"}",
                "api_key = \"{}\"",
                "const accessToken = '{}';",
                "refresh_token: \"{}\"",
            ])
            .into(),
        ),
        other => panic!("no planting for rule {other}"),
    }
}

/// Look-alikes that are not secrets, set around every planted one.
fn decoys(r: &mut Rng) -> [String; 4] {
    [
        r.chars(HEX, 40),
        format!(
            "{}-{}-7{}-b{}-{}",
            r.chars(HEX, 8),
            r.chars(HEX, 4),
            r.chars(HEX, 3),
            r.chars(HEX, 3),
            r.chars(HEX, 12)
        ),
        format!("sha256:{}", r.chars(HEX, 64)),
        format!("data:image/png;base64,iVBORw0KGgo{}==", r.chars(B64, 120)),
    ]
}

/// The text a snippet sits in (`{}` marks the snippet): a prompt, tool output, an answer, a log.
fn context(r: &mut Rng) -> String {
    let [commit, uuid, digest, image] = decoys(r);
    let forms = [
        format!("can you see why the deploy fails? I set this:\n{{}}\nbut it still answers 401. The last good commit was {commit}."),
        format!("$ cat .env\nNODE_ENV=production\nPORT=3000\n{{}}\nLOG_LEVEL=debug\nREQUEST_ID={uuid}\n"),
        format!("I found the credential in `config/settings.py`:\n\n```\n{{}}\n```\n\nYou should rotate it; the image layer is {digest}."),
        format!("2026-03-02T19:07:06.265Z INFO worker session={uuid} commit={commit}\n2026-03-02T19:07:06.301Z DEBUG {{}}\n2026-03-02T19:07:07.002Z INFO status=200"),
        format!("Here is the screenshot you asked about ({image}) and the request I ran:\n{{}}\nIt returned the dashboard."),
    ];
    forms[r.below(forms.len())].clone()
}

/// One planted secret of `rule`.
pub fn plant(rule: &'static str, r: &mut Rng) -> Planted {
    let (secret, snippet) = secret_of(rule, r);
    let outer = context(r);
    let (before, after) = outer.split_once("{}").unwrap();
    let (sb, sa) = snippet.split_once("{}").unwrap();
    let text = format!("{before}{sb}{secret}{sa}{after}");
    Planted {
        rule,
        written: format!("{sb}{secret}{sa}"),
        at: before.len() + sb.len(),
        secret,
        text,
    }
}

/// `per_rule` planted secrets of every rule.
pub fn plant_all(seed: u64, per_rule: usize) -> Vec<Planted> {
    let mut r = Rng::new(seed);
    let mut out = Vec::new();
    for rule in pidx::redact::RULES {
        for _ in 0..per_rule {
            out.push(plant(rule, &mut r));
        }
    }
    out
}

/// Writes the planted texts as one pi session under `root` (in turn a user prompt, an
/// assistant answer and a bash tool result), named `name`; returns its file.
pub fn write_session(root: &Path, name: &str, planted: &[Planted]) -> std::path::PathBuf {
    let dir = root.join("--home-u-secrets--");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("2026-03-01T10-00-00-000Z_{name}.jsonl"));
    let mut f = std::fs::File::create(&path).unwrap();
    let line = |v: serde_json::Value| v.to_string();
    writeln!(f, "{}", line(serde_json::json!({"type":"session","version":3,"id":name,"timestamp":"2026-03-01T10:00:00.000Z","cwd":"/home/u/secrets"}))).unwrap();
    let mut parent = serde_json::Value::Null;
    for (i, p) in planted.iter().enumerate() {
        let id = format!("{name}-e{i}");
        let ts = format!("2026-03-01T10:{:02}:{:02}.000Z", (i / 60) % 60, i % 60);
        let message = match i % 3 {
            0 => serde_json::json!({"role":"user","content":p.text,"timestamp":i}),
            1 => {
                serde_json::json!({"role":"assistant","content":[{"type":"text","text":p.text}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":i})
            }
            _ => {
                serde_json::json!({"role":"toolResult","toolCallId":format!("call{i}"),"toolName":"bash","content":[{"type":"text","text":p.text}],"isError":false,"timestamp":i})
            }
        };
        writeln!(f, "{}", line(serde_json::json!({"type":"message","id":id,"parentId":parent,"timestamp":ts,"message":message}))).unwrap();
        parent = id.into();
    }
    path
}
