/**
 * Exit-status phrases that every broker command's help repeats, said once so no command's help
 * drifts from the README's exit-code table.
 */

/** Exit 6 (ExitCode.auth): not worth a retry, unlike 4. */
export const REFUSED_EXIT = '6 when the broker refuses the credentials or a permission (retrying cannot help)'
