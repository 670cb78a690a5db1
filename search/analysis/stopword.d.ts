// The `stopword` package ships no typings; only the English and Chinese lists are used here.
declare module 'stopword' {
  export const eng: string[];
  export const zho: string[];
}
