/** One row of sql/queries/insights_user_flow.sql. */
export interface FlowRow {
  kind: 'entry' | 'link'
  source: string
  target: string
  position: number
  units: number
}

export interface SankeyNode {
  id: string
  label: string
  nodeColor: string
  percentage: number
  value: number
  step: number
}

export interface SankeyLink {
  source: string
  target: string
  value: number
}

/** OpenPanel's chart colours of the entries (at most three); a node takes its first source's. */
const ENTRY_COLORS = ['#2563EB', '#ff7557', '#7fe1d8']
/** Per node and step, the transitions kept. */
const BRANCHES = 3
/** Links carrying less than this share of the units (in percent) are left out. */
const MIN_LINK_PERCENT = 0.25

/**
 * OpenPanel's sankey from the entries and the transitions by position: from each node of step s,
 * its three largest transitions at position s (over the threshold) lead to nodes of step s + 1;
 * entries that lead nowhere are dropped; nodes that lead nowhere merge by label into
 * `<label>::final` at their latest step.
 */
export function buildSankey(rows: readonly FlowRow[], steps: number) {
  const entries = rows.filter((r) => r.kind === 'entry').sort((a, b) => b.units - a.units || a.source.localeCompare(b.source))
  const total = entries.reduce((s, r) => s + Number(r.units), 0)
  const threshold = Math.ceil((total * MIN_LINK_PERCENT) / 100)
  const nodes = new Map<string, Omit<SankeyNode, 'percentage'>>()
  const links: SankeyLink[] = []
  let active = entries.map((e, i) => {
    const node = { id: `${e.source}::step1`, label: e.source, nodeColor: ENTRY_COLORS[i % ENTRY_COLORS.length]!, value: Number(e.units), step: 1 }
    nodes.set(node.id, node)
    return node
  })
  for (let s = 1; s < steps && active.length > 0; s++) {
    const next = new Map<string, Omit<SankeyNode, 'percentage'>>()
    for (const node of active) {
      const outgoing = rows
        .filter((r) => r.kind === 'link' && Number(r.position) === s && r.source === node.label && r.target !== node.label)
        .sort((a, b) => b.units - a.units || a.target.localeCompare(b.target))
        .slice(0, BRANCHES)
        .filter((r) => Number(r.units) >= threshold)
      for (const r of outgoing) {
        const id = `${r.target}::step${s + 1}`
        const target = next.get(id) ?? { id, label: r.target, nodeColor: node.nodeColor, value: 0, step: s + 1 }
        target.value += Number(r.units)
        next.set(id, target)
        links.push({ source: node.id, target: id, value: Number(r.units) })
      }
    }
    for (const node of next.values()) nodes.set(node.id, node)
    active = [...next.values()]
  }
  const sources = new Set(links.map((l) => l.source))
  // Entries that lead nowhere are no flow; other nodes that lead nowhere end one.
  for (const node of nodes.values()) if (node.step === 1 && !sources.has(node.id)) nodes.delete(node.id)
  const finals = new Map<string, string>()
  for (const node of [...nodes.values()]) {
    if (node.step === 1 || sources.has(node.id)) continue
    const id = `${node.label}::final`
    const merged = nodes.get(id) ?? { ...node, id, value: 0 }
    merged.value += node.value
    merged.step = Math.max(merged.step, node.step)
    nodes.delete(node.id)
    nodes.set(id, merged)
    finals.set(node.id, id)
  }
  const merged = new Map<string, SankeyLink>()
  for (const l of links) {
    const target = finals.get(l.target) ?? l.target
    const key = `${l.source}\u0000${target}`
    const link = merged.get(key) ?? { source: l.source, target, value: 0 }
    link.value += l.value
    merged.set(key, link)
  }
  const body = [...nodes.values()]
    .map((n) => ({ ...n, percentage: total === 0 ? 0 : (n.value / total) * 100 }))
    .sort((a, b) => a.step - b.step || b.value - a.value || a.id.localeCompare(b.id))
  return { nodes: body, links: [...merged.values()], totalUnits: total }
}
