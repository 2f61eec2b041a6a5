/** One `events` row exactly as inserted (JSONEachRow); `imported_at` is left out by most fixtures. */
export interface EventRow {
  id: string
  name: string
  device_id: string
  profile_id: string
  project_id: string
  session_id: string
  /** UTC wall clock, `YYYY-MM-DD HH:mm:ss.SSS`. */
  created_at: string
  path: string
  origin: string
  referrer: string
  referrer_name: string
  referrer_type: string
  duration: number
  revenue: number
  properties: Record<string, string>
  country: string
  city: string
  region: string
  longitude: number | null
  latitude: number | null
  os: string
  os_version: string
  browser: string
  browser_version: string
  device: string
  brand: string
  model: string
  sdk_name: string
  sdk_version: string
  imported_at?: string | null
}
