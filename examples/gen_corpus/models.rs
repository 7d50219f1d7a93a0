//! Providers and models with pi-ai style ids, APIs and per-million-token prices, and the `usage`
//! object pi writes on assistant messages (cost = price / 1e6 * tokens, as pi-ai computes it).

use super::json::Line;

pub struct Model {
    pub provider: &'static str,
    pub api: &'static str,
    pub id: &'static str,
    /// $ per million tokens: input, output, cache read, cache write.
    pub price: [f64; 4],
    pub weight: f64,
    pub reasoning: bool,
}

const fn m(
    provider: &'static str,
    api: &'static str,
    id: &'static str,
    price: [f64; 4],
    weight: f64,
    reasoning: bool,
) -> Model {
    Model {
        provider,
        api,
        id,
        price,
        weight,
        reasoning,
    }
}

pub const MODELS: &[Model] = &[
    m(
        "anthropic",
        "anthropic-messages",
        "claude-sonnet-4-5",
        [3.0, 15.0, 0.3, 3.75],
        30.0,
        true,
    ),
    m(
        "anthropic",
        "anthropic-messages",
        "claude-opus-4-1",
        [15.0, 75.0, 1.5, 18.75],
        6.0,
        true,
    ),
    m(
        "anthropic",
        "anthropic-messages",
        "claude-haiku-4-5",
        [1.0, 5.0, 0.1, 1.25],
        5.0,
        true,
    ),
    m(
        "openai",
        "openai-responses",
        "gpt-5",
        [1.25, 10.0, 0.125, 0.0],
        15.0,
        true,
    ),
    m(
        "openai",
        "openai-responses",
        "gpt-5-codex",
        [1.25, 10.0, 0.125, 0.0],
        8.0,
        true,
    ),
    m(
        "openai",
        "openai-responses",
        "gpt-5-mini",
        [0.25, 2.0, 0.025, 0.0],
        4.0,
        true,
    ),
    m(
        "google",
        "google-generative-ai",
        "gemini-2.5-pro",
        [1.25, 10.0, 0.31, 0.0],
        8.0,
        true,
    ),
    m(
        "google",
        "google-generative-ai",
        "gemini-2.5-flash",
        [0.3, 2.5, 0.075, 0.0],
        4.0,
        true,
    ),
    m(
        "openrouter",
        "openai-completions",
        "z-ai/glm-4.6",
        [0.6, 2.2, 0.11, 0.0],
        3.0,
        true,
    ),
    m(
        "openrouter",
        "openai-completions",
        "moonshotai/kimi-k2",
        [0.6, 2.5, 0.15, 0.0],
        2.0,
        false,
    ),
    m(
        "xai",
        "openai-completions",
        "grok-code-fast-1",
        [0.2, 1.5, 0.02, 0.0],
        3.0,
        true,
    ),
];

pub fn weights() -> Vec<f64> {
    MODELS.iter().map(|m| m.weight).collect()
}

pub const THINKING_LEVELS: &[&str] = &["off", "minimal", "low", "medium", "high", "xhigh"];
pub const THINKING_WEIGHTS: &[f64] = &[15.0, 5.0, 15.0, 35.0, 25.0, 5.0];

#[derive(Default, Clone, Copy)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl Usage {
    /// Splits a request of `context` prompt tokens of which `cached` were cached by an earlier
    /// request, the way each provider reports it.
    pub fn for_request(model: &Model, context: u64, cached: u64, output: u64) -> Usage {
        let cached = cached.min(context);
        match model.api {
            "anthropic-messages" => {
                let fresh = context - cached;
                let input = fresh.min(3 + fresh / 50);
                Usage {
                    input,
                    output,
                    cache_read: cached,
                    cache_write: fresh - input,
                }
            }
            "openai-completions" if model.provider == "openrouter" => Usage {
                input: context,
                output,
                ..Default::default()
            },
            _ => {
                let hit = cached / 128 * 128;
                Usage {
                    input: context - hit,
                    output,
                    cache_read: hit,
                    cache_write: 0,
                }
            }
        }
    }

    pub fn total(&self) -> u64 {
        self.input + self.output + self.cache_read + self.cache_write
    }

    /// Writes `"usage":{input,output,cacheRead,cacheWrite,totalTokens,cost:{…}}`.
    pub fn write(&self, line: &mut Line, model: &Model) {
        let [pi, po, pr, pw] = model.price;
        let (ci, co) = (
            pi / 1_000_000.0 * self.input as f64,
            po / 1_000_000.0 * self.output as f64,
        );
        let (cr, cw) = (
            pr / 1_000_000.0 * self.cache_read as f64,
            pw / 1_000_000.0 * self.cache_write as f64,
        );
        line.key("usage");
        line.obj();
        line.kv_u64("input", self.input);
        line.kv_u64("output", self.output);
        line.kv_u64("cacheRead", self.cache_read);
        line.kv_u64("cacheWrite", self.cache_write);
        line.kv_u64("totalTokens", self.total());
        line.key("cost");
        line.obj();
        line.kv_f64("input", ci);
        line.kv_f64("output", co);
        line.kv_f64("cacheRead", cr);
        line.kv_f64("cacheWrite", cw);
        line.kv_f64("total", ci + co + cr + cw);
        line.end();
        line.end();
    }
}
