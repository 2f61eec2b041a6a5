import type { Agent, IncomingHttpHeaders } from 'node:http'

export interface Reply {
  status: number
  headers: IncomingHttpHeaders
  body: Buffer
  ms: number
  error?: string
}
export function agent(sockets: number): Agent
export function get(url: string, headers: Record<string, string>, keepAliveAgent: Agent): Promise<Reply>
