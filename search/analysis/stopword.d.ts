// The `stopword` package ships no typings; only the English list is used here.
declare module 'stopword' {
  export const eng: string[];
}
