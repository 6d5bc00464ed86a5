/**
 * The enumerations the pages offer as choices: the server's own lists, from modules without
 * imports, so a page that needs a list does not load the validation library with it.
 */
export * from "../../providers/provider.enums.ts";
export { ACTIVE_STATUSES, PRIORITIES } from "../../reviews/review.enums.ts";
