// DuckDB peer for ParqDB's filtered-search benchmark: the exact floor.
//
//   node duckdb_filter.mjs search SOURCE.parquet QUERIES.fvecs K 'PRED' ['PRED' ...]
//   node duckdb_filter.mjs count SOURCE.parquet 'PRED' ['PRED' ...]
//
// search loads the id, vec (as FLOAT[D]) and every other non-vector column
// of SOURCE into an in-memory table (not timed), then for each predicate
// runs, one query at a time on one thread,
//   SELECT id FROM t WHERE PRED ORDER BY array_distance(vec, q) LIMIT K
// and prints QPS (wall clock) and QPS per CPU-second of the process.
// The predicate "true" is the unfiltered brute force.
//
// count runs SELECT count(*) FROM read_parquet(SOURCE) WHERE PRED (one
// thread, the file read each time, as ParqDB builds a predicate's bitmap
// from the source) three times and prints the best time.
//
// Install: npm ci (package.json pins @duckdb/node-api); node 20.
import { readFileSync } from "node:fs";
import { DuckDBInstance, ARRAY, FLOAT } from "@duckdb/node-api";

function fvecs(path) {
  const buf = readFileSync(path);
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const d = dv.getInt32(0, true);
  const n = buf.byteLength / (4 * (d + 1));
  const out = [];
  for (let i = 0; i < n; i++) {
    const row = new Array(d);
    for (let j = 0; j < d; j++) row[j] = dv.getFloat32(4 * (i * (d + 1) + 1 + j), true);
    out.push(row);
  }
  return { d, rows: out };
}

const sqlString = (s) => "'" + s.replaceAll("'", "''") + "'";

async function search(conn, src, qpath, k, preds) {
  const { d, rows: qs } = fvecs(qpath);
  await conn.run(
    `CREATE TABLE t AS SELECT * EXCLUDE (vec), vec::FLOAT[${d}] AS vec FROM read_parquet(${sqlString(src)})`,
  );
  await conn.run(`CREATE TABLE qs (qi INTEGER, q FLOAT[${d}])`);
  const app = await conn.createAppender("qs");
  qs.forEach((q, i) => {
    app.appendInteger(i);
    app.appendArray(q, ARRAY(FLOAT, d));
    app.endRow();
  });
  app.closeSync();
  for (const pred of preds) {
    const rows = (await conn.runAndReadAll(`SELECT count(*) FROM t WHERE ${pred}`)).getRows()[0][0];
    const stmt = await conn.prepare(
      `SELECT id FROM t WHERE ${pred} ORDER BY array_distance(vec, (SELECT q FROM qs WHERE qi = $1)) LIMIT ${k}`,
    );
    let got = 0;
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    for (let i = 0; i < qs.length; i++) {
      stmt.bindInteger(1, i);
      got += (await stmt.runAndReadAll()).getRows().length;
    }
    const c = process.cpuUsage(c0);
    const wall = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu = (c.user + c.system) / 1e6;
    console.log(
      `duckdb where ${pred} rows=${rows} queries=${qs.length} hits/q=${(got / qs.length).toFixed(1)} qps=${(qs.length / wall).toFixed(1)} qps_cpu=${(qs.length / cpu).toFixed(1)}`,
    );
  }
}

async function count(conn, src, preds) {
  for (const pred of preds) {
    let best = Infinity, bestCPU = Infinity, n = 0;
    for (let r = 0; r < 3; r++) {
      const t0 = process.hrtime.bigint();
      const c0 = process.cpuUsage();
      n = (await conn.runAndReadAll(`SELECT count(*) FROM read_parquet(${sqlString(src)}) WHERE ${pred}`)).getRows()[0][0];
      const c = process.cpuUsage(c0);
      best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
      bestCPU = Math.min(bestCPU, (c.user + c.system) / 1e6);
    }
    console.log(`duckdb count where ${pred} rows=${n} seconds=${best.toFixed(4)} cpu_seconds=${bestCPU.toFixed(4)}`);
  }
}

const [mode, ...a] = process.argv.slice(2);
const inst = await DuckDBInstance.create(":memory:", { threads: "1" });
const conn = await inst.connect();
if (mode === "search" && a.length >= 4) {
  await search(conn, a[0], a[1], Number(a[2]), a.slice(3));
} else if (mode === "count" && a.length >= 2) {
  await count(conn, a[0], a.slice(1));
} else {
  console.error("usage: duckdb_filter.mjs search SOURCE.parquet QUERIES.fvecs K PRED... | count SOURCE.parquet PRED...");
  process.exit(2);
}
