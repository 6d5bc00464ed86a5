-- Full-text search over providers (API.md §4 "Lists"), written by hand: a generated tsvector
-- column and its GIN index are not expressible in prisma/schema.prisma, so the model does not
-- list "searchVector" (tests/db/schema-drift.test.ts allows it as an extra column). The column is
-- STORED and GENERATED, so PostgreSQL keeps it in step on every insert and update, including rows
-- inserted with plain SQL (bulk loads, seeders).
--
-- The `simple` configuration lower-cases without stemming or stop words, so codes and labels stay
-- searchable as written. Accents are folded by provider_search_fold(), a fixed IMMUTABLE
-- translate() of the accented Latin letters (U+00C0–U+024F with a plain base letter), rather than
-- the `unaccent` extension: unaccent() is only STABLE (not allowed in a generated column without a
-- wrapper), and the extension may be missing or not creatable by the migrating role.
-- provider_search_text() also turns - . _ / : @ into spaces, so `route-planner`,
-- `acme.route_planner` or an email are indexed word by word, the same words the query side splits
-- user input into (src/providers/provider.search.ts), and the parser never reads them as one
-- host/file/email token. Both functions use SQL-standard bodies (PostgreSQL 14+), bound when
-- created, so evaluating the column never depends on the session's search_path. Weights: code and name A, labels B, summary C, description D. Queries
-- use provider_search_fold() too, so both sides fold alike.

CREATE FUNCTION "provider_search_fold"(value text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN translate(value,
        'ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöùúûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĨĩĪīĬĭĮįİĴĵĶķĹĺĻļĽľŃńŅņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽžƠơƯưǍǎǏǐǑǒǓǔǕǖǗǘǙǚǛǜǞǟǠǡǦǧǨǩǪǫǬǭǰǴǵǸǹǺǻȀȁȂȃȄȅȆȇȈȉȊȋȌȍȎȏȐȑȒȓȔȕȖȗȘșȚțȞȟȦȧȨȩȪȫȬȭȮȯȰȱȲȳ',
        'AAAAAACEEEEIIIINOOOOOUUUUYaaaaaaceeeeiiiinooooouuuuyyAaAaAaCcCcCcCcDdEeEeEeEeEeGgGgGgGgHhIiIiIiIiIJjKkLlLlLlNnNnNnOoOoOoRrRrRrSsSsSsSsTtTtUuUuUuUuUuUuWwYyYZzZzZzOoUuAaIiOoUuUuUuUuUuAaAaGgKkOoOojGgNnAaAaAaEeEeIiIiOoOoRrRrUuUuSsTtHhAaEeOoOoOoOoYy');

CREATE FUNCTION "provider_search_text"(value text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN translate("provider_search_fold"(value), '-._/:@', '      ');

ALTER TABLE "providers" ADD COLUMN "searchVector" tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple'::regconfig, "provider_search_text"("providerCode")), 'A') ||
    setweight(to_tsvector('simple'::regconfig, "provider_search_text"("name")), 'A') ||
    setweight(to_tsvector('simple'::regconfig, "provider_search_text"("labels"::text)), 'B') ||
    setweight(to_tsvector('simple'::regconfig, "provider_search_text"("summary")), 'C') ||
    setweight(to_tsvector('simple'::regconfig, coalesce("provider_search_text"("description"), '')), 'D')
) STORED;

-- CreateIndex
CREATE INDEX "providers_searchVector_idx" ON "providers" USING GIN ("searchVector");

-- The queue matches review codes by prefix (`RV-AB%`); text_pattern_ops lets LIKE 'x%' use a btree
-- whatever the database's collation.
CREATE INDEX "reviews_reviewCode_prefix_idx" ON "reviews" ("reviewCode" text_pattern_ops);
