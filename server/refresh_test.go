package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server"
	"github.com/parqdb/parqdb/server/serving"
	"github.com/parqdb/parqdb/storage"
)

// TestLeaseSurvivesSwap: a request holding the old snapshot finishes on
// it after the swap; the old snapshot closes on its last release.
func TestLeaseSurvivesSwap(t *testing.T) {
	ctx := context.Background()
	env := newLocalEnv(t)
	buildGlove(t, env, "words", "lvq8")
	pool := serving.NewPool(env, serving.PoolOptions{RefreshInterval: -1})
	defer pool.Close()
	old, err := pool.Acquire(ctx, "words", 0)
	if err != nil {
		t.Fatal(err)
	}
	if id := commitSuccessor(t, env, "words"); id != 2 {
		t.Fatalf("successor id %d", id)
	}
	if err := pool.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if st := pool.Stats(); st.OpenSnapshots != 2 || st.Refreshes != 1 {
		t.Fatalf("after the swap: %+v, want 2 open snapshots and 1 refresh", st)
	}
	q := make([]float32, old.Index().Dim())
	q[0] = 1
	if _, err := old.Index().Search(ctx, q, query.Options{K: 3}); err != nil {
		t.Fatalf("old snapshot after swap: %v", err)
	}
	old.Release()
	if st := pool.Stats(); st.OpenSnapshots != 1 {
		t.Fatalf("after the last release: %d open snapshots, want 1", st.OpenSnapshots)
	}
	cur, err := pool.Acquire(ctx, "words", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Release()
	if id := cur.Index().Snapshot().SnapshotID; id != 2 {
		t.Fatalf("serving snapshot %d, want 2", id)
	}
	// An explicitly requested old snapshot opens separately.
	pinned, err := pool.Acquire(ctx, "words", 1)
	if err != nil {
		t.Fatal(err)
	}
	if id := pinned.Index().Snapshot().SnapshotID; id != 1 {
		t.Fatalf("pinned snapshot %d", id)
	}
	pinned.Release()
	// A dropped index is forgotten at the next refresh.
	if err := env.Catalog.Drop(ctx, "words"); err != nil {
		t.Fatal(err)
	}
	if err := pool.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Acquire(ctx, "words", 0); serving.AsError(err).Code != serving.CodeIndexNotFound {
		t.Fatalf("dropped index: %v", err)
	}
}

// TestRefreshUnderLoad commits a successor snapshot while clients search
// without pause: every request succeeds and the new snapshot is picked up
// by polling.
func TestRefreshUnderLoad(t *testing.T) {
	env := newLocalEnv(t)
	f := &fixture{env: env}
	buildGlove(t, env, "words", "lvq8")
	// 8 clients and ample room (a client may send its next request before
	// the server has released the slot of its last), so that no answer is
	// 503 overloaded.
	f.srv, f.url = startServer(t, env, server.Config{Pool: serving.PoolOptions{RefreshInterval: 20 * time.Millisecond},
		Load: serving.LoadLimits{MaxConcurrent: 2, MaxQueue: 64}})
	var (
		requests, failures atomic.Int64
		seen               [3]atomic.Int64
		stop               atomic.Bool
		wg                 sync.WaitGroup
		firstErr           atomic.Value
	)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys := []string{"king", "queen", "paris", "music", "water"}
			for i := 0; !stop.Load(); i++ {
				body := fmt.Sprintf(`{"key": %q, "k": 5, "columns": ["word"]}`, keys[(i+w)%len(keys)])
				status, m := postRaw(f.url+"/v1/indexes/words/search", body)
				requests.Add(1)
				if status != http.StatusOK {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprint(status, m))
					continue
				}
				if id, err := m["snapshot_id"].(json.Number).Int64(); err == nil && id < 3 {
					seen[id].Add(1)
				}
			}
		}()
	}
	for requests.Load() < 50 {
		time.Sleep(5 * time.Millisecond)
	}
	commitSuccessor(t, env, "words")
	deadline := time.Now().Add(2 * time.Minute)
	for seen[2].Load() < 50 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if n := failures.Load(); n > 0 {
		t.Fatalf("%d of %d requests failed; first: %v", n, requests.Load(), firstErr.Load())
	}
	if seen[1].Load() == 0 || seen[2].Load() < 50 {
		t.Fatalf("answers by snapshot: 1: %d, 2: %d; want both", seen[1].Load(), seen[2].Load())
	}
	if st := f.srv.Pool().Stats(); st.OpenSnapshots != 1 {
		t.Fatalf("%d snapshots open after the run, want 1 (the old one closed)", st.OpenSnapshots)
	}
	t.Logf("%d requests, snapshot 1: %d, snapshot 2: %d", requests.Load(), seen[1].Load(), seen[2].Load())
}

func postRaw(url, body string) (int, map[string]any) {
	resp, err := http.Post(url, "application/json", stringsReader(body))
	if err != nil {
		return 0, map[string]any{"transport": err.Error()}
	}
	defer resp.Body.Close()
	var m map[string]any
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return resp.StatusCode, map[string]any{"decode": err.Error()}
	}
	return resp.StatusCode, m
}

// TestReplicasS3Postgres runs two servers, each with its own connections,
// over one warehouse on the S3 server and one PostgreSQL catalog: they
// answer identically, before and after a successor snapshot.
func TestReplicasS3Postgres(t *testing.T) {
	ctx := context.Background()
	s3srv := testenv.S3(t)
	bucket := s3srv.NewBucket(t)
	dsn := testenv.Postgres(t)
	open := func() query.Env {
		wh, err := storage.NewS3(ctx, bucket, "wh", storage.S3Endpoint(s3srv.Endpoint),
			storage.S3Credentials(s3srv.AccessKey, s3srv.SecretKey), storage.S3Region(s3srv.Region))
		if err != nil {
			t.Fatal(err)
		}
		cat, err := catalog.OpenPostgres(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cat.Close() })
		return query.Env{Warehouse: wh, Catalog: cat}
	}
	admin := open()
	buildGlove(t, admin, "words", "lvq8")
	var urls []string
	var srvs []*server.Server
	for range 2 {
		s, u := startServer(t, open(), server.Config{Pool: serving.PoolOptions{RefreshInterval: -1}})
		srvs, urls = append(srvs, s), append(urls, u)
	}
	bodies := []string{
		`{"key": "king", "k": 10}`,
		`{"key": "paris", "k": 5, "nprobe": 32, "refine": 4, "columns": ["word", "rank"]}`,
		`{"key": "music", "k": 20, "keys_only": true}`,
	}
	compare := func(wantSnap string) {
		t.Helper()
		for _, b := range bodies {
			var answers []string
			for _, u := range urls {
				status, m := postRaw(u+"/v1/indexes/words/search", b)
				if status != 200 {
					t.Fatalf("%s: %d %v", u, status, m)
				}
				if m["snapshot_id"].(json.Number).String() != wantSnap {
					t.Fatalf("%s serves snapshot %v, want %s", u, m["snapshot_id"], wantSnap)
				}
				delete(m, "stats") // storage work differs with cache state
				a, _ := json.Marshal(m)
				answers = append(answers, string(a))
			}
			if answers[0] != answers[1] {
				t.Fatalf("replicas differ for %s:\n%s\n%s", b, answers[0], answers[1])
			}
		}
	}
	compare("1")
	commitSuccessor(t, admin, "words")
	for _, s := range srvs {
		if err := s.Pool().Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	compare("2")
}
