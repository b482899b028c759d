package reliability_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/lifecycle"
	"github.com/parqdb/parqdb/reliability"
)

// Child processes are the test binary re-executed with childEnv set; they
// take their parameters from the environment and report on stdout, one
// line per event:
//
//	KILL <op> <key>          the child is about to SIGKILL itself
//	COMMITTED <snapshot-id>  a commit returned (create, refresh, optimize)
//	EXPIRED <id,id,…>        an expire commit returned
//	NOOP                     the operation had nothing to do
//	GC <deleted>             gc finished
//	OPS <n>                  the mutating storage operations done in all
//	LANDED refresh <id> <seq> | LANDED expire <id,…> | CONFLICT <role> <error> | NOOP <role>
//	                         (writer mode, once per iteration)
const (
	childEnv        = "PARQDB_RELIABILITY_CHILD" // "op" or "writer"
	childWarehouse  = "PARQDB_RELIABILITY_WAREHOUSE"
	childCatalog    = "PARQDB_RELIABILITY_CATALOG"
	childS3Endpoint = "PARQDB_RELIABILITY_S3_ENDPOINT"
	childS3Access   = "PARQDB_RELIABILITY_S3_ACCESS"
	childS3Secret   = "PARQDB_RELIABILITY_S3_SECRET"
	childS3Region   = "PARQDB_RELIABILITY_S3_REGION"
	childOp         = "PARQDB_RELIABILITY_OP" // create, refresh, retrain, optimize, expire, gc
	childName       = "PARQDB_RELIABILITY_NAME"
	childSource     = "PARQDB_RELIABILITY_SOURCE"
	childRetain     = "PARQDB_RELIABILITY_RETAIN"
	childKillAt     = "PARQDB_RELIABILITY_KILL_AT"     // kill at the Nth mutating storage operation
	childKillAfter  = "PARQDB_RELIABILITY_KILL_AFTER"  // "1": after it returned, else before it starts
	childKillCommit = "PARQDB_RELIABILITY_KILL_COMMIT" // "1": after the index metadata file is written, before its commit
	childRole       = "PARQDB_RELIABILITY_ROLE"        // writer: refresh or expire
	childIters      = "PARQDB_RELIABILITY_ITERS"
	childID         = "PARQDB_RELIABILITY_ID"
	childVectors    = "PARQDB_RELIABILITY_VECTORS_FILE" // "1": create writes the vectors file
	childKillKey    = "PARQDB_RELIABILITY_KILL_KEY"     // kill before the first mutating operation on a key containing this
)

func runChild(mode string) int {
	if err := child(mode); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

func child(mode string) error {
	ctx := context.Background()
	wh, err := openWarehouse(ctx, os.Getenv(childWarehouse), os.Getenv(childS3Endpoint),
		os.Getenv(childS3Access), os.Getenv(childS3Secret), os.Getenv(childS3Region))
	if err != nil {
		return err
	}
	killAt, _ := strconv.ParseInt(os.Getenv(childKillAt), 10, 64)
	afterKill := os.Getenv(childKillAfter) == "1"
	commitKill := os.Getenv(childKillCommit) == "1"
	killKey := os.Getenv(childKillKey)
	var started, done atomic.Int64
	wh = reliability.NewHookBucket(wh, reliability.Hooks{
		Before: func(_ context.Context, op, key string) error {
			if reliability.Mutating(op) && started.Add(1) == killAt && !afterKill {
				killSelf(op, key)
			}
			if killKey != "" && reliability.Mutating(op) && strings.Contains(key, killKey) {
				killSelf(op, key)
			}
			return nil
		},
		After: func(_ context.Context, op, key string, err error) {
			if reliability.Mutating(op) && done.Add(1) == killAt && afterKill {
				killSelf(op, key)
			}
			if commitKill && err == nil && isIndexMetadata(op, key) {
				killSelf(op, key)
			}
		},
	})
	cat, err := catalog.Open(ctx, os.Getenv(childCatalog), wh)
	if err != nil {
		return err
	}
	defer cat.Close()
	env := reliability.Env{Warehouse: wh, Catalog: cat}
	switch mode {
	case "op":
		err = childOp1(ctx, env, os.Getenv(childOp))
		fmt.Println("OPS", started.Load())
		return err
	case "writer":
		return childWriter(ctx, env)
	}
	return fmt.Errorf("unknown child mode %q", mode)
}

// killSelf announces the kill point and sends this process SIGKILL: no
// deferred function, no flush, no cleanup runs, as in a power cut of the
// process.
func killSelf(op, key string) {
	fmt.Println("KILL", op, key)
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	time.Sleep(time.Hour)
}

// isIndexMetadata reports whether op stores an index metadata file (not a
// centroid artifact's v1.metadata.json): the last write before a commit.
func isIndexMetadata(op, key string) bool {
	return op == reliability.OpPut && strings.HasPrefix(key, "metadata/") &&
		strings.HasSuffix(key, ".metadata.json") && !strings.HasSuffix(key, "/v1.metadata.json")
}

func childOp1(ctx context.Context, env reliability.Env, op string) error {
	name := os.Getenv(childName)
	benv := buildEnv(env)
	switch op {
	case "create":
		o := createOptions(name, os.Getenv(childSource))
		o.VectorsFile = os.Getenv(childVectors) == "1"
		res, err := indexer.Create(ctx, benv, o)
		if err != nil {
			return err
		}
		fmt.Println("COMMITTED", res.Metadata.CurrentSnapshotID)
	case "refresh", "retrain":
		res, err := indexer.Refresh(ctx, benv, name, indexer.RefreshOptions{Retrain: op == "retrain", Iterations: 5})
		if err != nil {
			return err
		}
		if res.Build == nil {
			fmt.Println("NOOP")
			return nil
		}
		fmt.Println("COMMITTED", res.Build.Metadata.CurrentSnapshotID)
	case "optimize":
		res, err := indexer.Optimize(ctx, benv, name, indexer.OptimizeOptions{Force: true})
		if err != nil {
			return err
		}
		if !res.Done {
			fmt.Println("NOOP")
			return nil
		}
		fmt.Println("COMMITTED", res.Build.Metadata.CurrentSnapshotID)
	case "expire":
		retain, _ := strconv.Atoi(os.Getenv(childRetain))
		res, err := lifecycle.Expire(ctx, lifeEnv(env), name, lifecycle.ExpireOptions{RetainLast: retain})
		if err != nil {
			return err
		}
		if len(res.Removed) == 0 {
			fmt.Println("NOOP")
			return nil
		}
		fmt.Println("EXPIRED", joinIDs(res.Removed))
	case "gc":
		rep, err := lifecycle.GC(ctx, lifeEnv(env), lifecycle.GCOptions{
			Grace: time.Nanosecond, GraceSet: true, Now: func() time.Time { return time.Now().Add(time.Hour) },
		})
		if err != nil {
			return err
		}
		fmt.Println("GC", len(rep.Orphans))
	default:
		return fmt.Errorf("unknown operation %q", op)
	}
	return nil
}

// childWriter refreshes (after appending its own part to the source) or
// expires index name, childIters times, reporting each outcome.
func childWriter(ctx context.Context, env reliability.Env) error {
	name, role := os.Getenv(childName), os.Getenv(childRole)
	id, _ := strconv.Atoi(os.Getenv(childID))
	iters, _ := strconv.Atoi(os.Getenv(childIters))
	rng := rand.New(rand.NewPCG(uint64(id), uint64(os.Getpid())))
	for i := range iters {
		time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
		switch role {
		case "refresh":
			part := filepath.Join(os.Getenv(childSource), fmt.Sprintf("w%02d-%03d.parquet", id, i))
			if err := writePart(part, int64(1_000_000*(id+1)+1000*i), 20, uint64(1000*id+i+2)); err != nil {
				return err
			}
			res, err := indexer.Refresh(ctx, buildEnv(env), name, indexer.RefreshOptions{Iterations: 5})
			switch {
			case errors.Is(err, indexer.ErrConcurrent) || errors.Is(err, catalog.ErrConflict):
				fmt.Println("CONFLICT", role, oneLine(err))
			case err != nil:
				return err
			case res.Build == nil:
				fmt.Println("NOOP", role)
			default:
				s := res.Build.Metadata.CurrentSnapshot()
				fmt.Println("LANDED", role, s.SnapshotID, s.SequenceNumber)
			}
		case "expire":
			res, err := lifecycle.Expire(ctx, lifeEnv(env), name, lifecycle.ExpireOptions{RetainLast: 1 + rng.IntN(3)})
			switch {
			case errors.Is(err, catalog.ErrConflict):
				fmt.Println("CONFLICT", role, oneLine(err))
			case err != nil:
				return err
			case len(res.Removed) == 0:
				fmt.Println("NOOP", role)
			default:
				fmt.Println("LANDED", role, joinIDs(res.Removed))
			}
		default:
			return fmt.Errorf("unknown writer role %q", role)
		}
	}
	return nil
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ",")
}

func parseIDs(s string) []int64 {
	var ids []int64
	for _, f := range strings.Split(s, ",") {
		if id, err := strconv.ParseInt(f, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}
