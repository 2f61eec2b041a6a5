import { createProject, findProject, isValidTimezone, listProjects, PROJECT_ID } from '../projects.ts'
import type { Runtime } from '../runtime.ts'
import { CommandError, parse, UsageError } from './usage.ts'

export async function projectsCommand(args: string[], open: () => Promise<Runtime>): Promise<void> {
  const [sub, ...rest] = args
  if (sub === 'list') {
    parse(rest, {})
    const rt = await open()
    try {
      for (const p of await listProjects(rt.runner)) process.stdout.write(`${JSON.stringify(p)}\n`)
    } finally {
      await rt.close()
    }
    return
  }
  if (sub !== 'create') throw new UsageError(`unknown projects command: ${sub ?? '(none)'}`)
  const { values, positionals } = parse(
    rest,
    { name: { type: 'string' }, timezone: { type: 'string' }, organization: { type: 'string' } },
    1,
  )
  const id = positionals[0]
  if (!id) throw new UsageError('projects create needs a project id')
  if (!PROJECT_ID.test(id)) throw new UsageError(`invalid project id "${id}": letters, digits, "-" and "_", at most 64`)
  const timezone = values.timezone ?? 'UTC'
  if (!isValidTimezone(timezone)) throw new UsageError(`invalid timezone "${timezone}": use an IANA name such as Europe/Stockholm`)
  const rt = await open()
  try {
    if (await findProject(rt.runner, id)) throw new CommandError(`project ${id} already exists`)
    await createProject(rt.runner, { id, name: values.name ?? id, timezone, organizationId: values.organization ?? 'default' })
    process.stdout.write(`${JSON.stringify({ id, name: values.name ?? id, timezone, organizationId: values.organization ?? 'default' })}\n`)
  } finally {
    await rt.close()
  }
}
