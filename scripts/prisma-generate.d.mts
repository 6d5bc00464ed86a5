/** The PostgreSQL twin of prisma/schema.prisma (see prisma-generate.mjs). */
export function postgresSchema(source: string): string;
