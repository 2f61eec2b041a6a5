import type { Config } from '../config.ts'

/** Where this server answers, as a person would type it (an IPv6 host in brackets). */
export const baseUrlOf = (config: Pick<Config, 'HOST' | 'PORT'>) =>
  `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${config.PORT}`

/**
 * The explorer's sign-in link: the credentials ride in the fragment, which the browser never
 * sends, and the page removes it from the address bar once read.
 */
export function explorerLink(baseUrl: string, client: { id: string; secret: string }, projectId: string | null): string {
  const query = projectId ? `?project=${encodeURIComponent(projectId)}` : ''
  return `${baseUrl}/${query}#client=${client.id}:${client.secret}`
}
