/**
 * A wire type as the server builds it: the schema-derived types are mutable (what a decoder makes),
 * the server's values are readonly all the way down; a handler returns `Wire<PolicyList>`.
 */
export type Wire<T> = T extends readonly (infer U)[]
  ? readonly Wire<U>[]
  : T extends object
    ? { readonly [K in keyof T]: Wire<T[K]> }
    : T;
