/** A mistake in an admin command line or its arguments (exit status 2, with the command's usage). */
export class UsageError extends Error {}
