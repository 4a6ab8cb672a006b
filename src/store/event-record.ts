/** An event as the log stores it: its number, its type and its JSON text (serialised once). */
export interface EventRecord {
  seq: number;
  type: string;
  data: string;
}
