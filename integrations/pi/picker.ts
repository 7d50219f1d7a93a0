// Choosing one of many lines in pi's terminal UI: a list that filters as you type (every word
// typed must appear in a line, any case), showing a window of rows, so tens of thousands of
// sessions stay instant. Outside the terminal UI (RPC clients) pi's own select dialog is used.
import { Container, type SelectItem, SelectList, Text } from "@earendil-works/pi-tui";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";

const VISIBLE = 12;

/** Lines whose text holds every word of `query` (lower case), first `limit` of them. */
export function filterLines(lines: string[], query: string, limit = Infinity): number[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const out: number[] = [];
  for (let i = 0; i < lines.length && out.length < limit; i++) {
    const l = lines[i].toLowerCase();
    if (words.every((w) => l.includes(w))) out.push(i);
  }
  return out;
}

/** The index of the chosen line, or undefined on Escape. */
export async function pickLine(ctx: ExtensionContext, title: string, lines: string[]): Promise<number | undefined> {
  if (ctx.mode !== "tui") {
    const width = String(lines.length).length;
    const options = lines.map((l, i) => `${String(i + 1).padStart(width)}. ${l}`);
    const picked = await ctx.ui.select(title, options);
    const i = picked === undefined ? -1 : options.indexOf(picked);
    return i >= 0 ? i : undefined;
  }
  return ctx.ui.custom<number | undefined>((tui, theme, _kb, done) => {
    let query = "";
    const listTheme = {
      selectedPrefix: (t: string) => theme.fg("accent", t),
      selectedText: (t: string) => theme.fg("accent", t),
      description: (t: string) => theme.fg("muted", t),
      scrollInfo: (t: string) => theme.fg("dim", t),
      noMatch: (t: string) => theme.fg("warning", t),
    };
    const header = new Text("", 1, 0);
    let list: SelectList;
    const container = new Container();
    const build = () => {
      // SelectList's own filter matches value prefixes only; filtering happens here.
      const shown = filterLines(lines, query, 2000);
      const items: SelectItem[] = shown.map((i) => ({ value: String(i), label: lines[i] }));
      list = new SelectList(items, Math.min(VISIBLE, Math.max(items.length, 1)), listTheme);
      list.onSelect = (item) => done(Number(item.value));
      list.onCancel = () => done(undefined);
      const more = shown.length === 2000 ? "2000+" : String(shown.length);
      header.setText(
        `${theme.fg("accent", theme.bold(title))}\n${theme.fg("dim", `${more} of ${lines.length} · type to filter`)}  > ${query}`,
      );
      container.clear();
      container.addChild(header);
      container.addChild(list);
      container.addChild(new Text(theme.fg("dim", "↑↓ move · enter choose · esc cancel"), 1, 0));
    };
    build();
    return {
      render: (width: number) => container.render(width),
      invalidate: () => container.invalidate(),
      handleInput(data: string) {
        if (data === "\x7f" || data === "\b") {
          query = Array.from(query).slice(0, -1).join("");
          build();
        } else if (data.length >= 1 && !/[\u0000-\u001f\u007f]/.test(data)) {
          query += data;
          build();
        } else {
          list.handleInput(data);
        }
        tui.requestRender();
      },
    };
  });
}
