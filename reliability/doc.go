// Package reliability holds the harnesses that check ParqDB's durability
// promises against the real packages, and the small pieces they share:
//
//   - crash safety: create, refresh, optimize, expire and gc run in a child
//     process (the test binary re-executed) that is killed with SIGKILL at
//     chosen storage operations or after random delays; after every kill
//     the parent checks the index (Check), the snapshot ledger (Ledger),
//     and that gc removes the orphans (Orphans);
//   - concurrent writers: two to eight processes refresh or expire one
//     index through SQLite, PostgreSQL and the object-store catalog, and the
//     final history must hold every landed snapshot with dense sequence
//     numbers;
//   - fault injection: storage.WithFaults, HookBucket and StallBucket make
//     writes, reads and closes fail, stall past a deadline or hit a full
//     disk, and every operation must fail cleanly, leave the catalog as it
//     was, and succeed when retried;
//   - damaged warehouses: every warehouse file deleted, emptied, halved or
//     replaced by garbage, and every read command of the parqdb binary run
//     on it, which must not panic and must fail naming the file;
//   - the outside-open guard: the same commands under strace against
//     metadata whose source points outside the warehouse, which must open
//     nothing but the warehouse and the bound source and connect nowhere.
//
// The harnesses themselves are the package's tests; docs/reliability.md
// describes them, the commands that run them in full, and their figures.
// Nothing here is used by ParqDB itself.
package reliability
