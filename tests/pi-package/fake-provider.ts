// A model provider for tests: no network, answers every prompt with "fake answer N: <prompt>",
// built on pi-ai's own faux provider core so pi streams, records and counts it as a real one.
// A prompt "write PATH" first calls pi's write tool on PATH (so the session changed a file).
import { createFauxCore, fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI) {
  const core = createFauxCore({ api: "pidx-fake", provider: "pidx-fake", models: [{ id: "fake-1", name: "Fake" }] });
  const answer = (context: any, _options: unknown, state: { callCount: number }) => {
    const users = (context.messages ?? []).filter((m: any) => m.role === "user");
    const last = users[users.length - 1];
    const text = typeof last?.content === "string" ? last.content : (last?.content ?? []).map((b: any) => b.text ?? "").join(" ");
    const previous = context.messages?.[context.messages.length - 1];
    const write = /^write (\S+)/.exec(text);
    if (write && previous?.role === "user") {
      return fauxAssistantMessage(fauxToolCall("write", { path: write[1], content: "written by the fake model\n" }), { stopReason: "toolUse" });
    }
    return fauxAssistantMessage(`fake answer ${state.callCount}: ${text}`);
  };
  core.setResponses(Array.from({ length: 200 }, () => answer));
  pi.registerProvider("pidx-fake", {
    name: "pidx fake",
    baseUrl: "http://127.0.0.1:9/never-called",
    apiKey: "fake-key",
    api: "pidx-fake" as any,
    streamSimple: core.streamSimple as any,
    models: [
      {
        id: "fake-1",
        name: "Fake",
        reasoning: false,
        input: ["text"],
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        contextWindow: 100000,
        maxTokens: 4000,
      },
    ],
  });
}
