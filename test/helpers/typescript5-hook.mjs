// openapi-typescript builds its output with TypeScript 5's compiler API; the
// project's `typescript` is 7 (the native compiler), which has none. This
// resolve hook gives openapi-typescript, and only it, the `typescript-5`
// dev dependency (npm:typescript@5) when it imports `typescript`.
export async function resolve(specifier, context, next) {
  if (specifier === 'typescript' && context.parentURL?.includes('/node_modules/openapi-typescript/')) return next('typescript-5', context);
  return next(specifier, context);
}
