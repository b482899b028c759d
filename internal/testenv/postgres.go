package testenv

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

// postgresUser is the cluster's superuser; its password is random per
// process and required on TCP connections (scram-sha-256), so that tests
// see a DSN with a real secret in it.
const postgresUser = "postgres"

type pgServer struct {
	port     int
	password string
	dir      string
	admin    *sql.DB
	stop     func()
	seq      atomic.Int64
}

var pg struct {
	once sync.Once
	srv  *pgServer
	err  error
	mu   sync.Mutex // guards done
	done bool
}

// Postgres returns the DSN of a new, empty database on this process's
// private PostgreSQL server, starting the server on first use: a cluster
// made with Debian's initdb in a temporary folder, listening on 127.0.0.1
// on a random free port, with fsync off (tests need no crash safety from
// PostgreSQL itself). The DSN is a postgres:// URL that carries the
// superuser's password. The database is dropped when the test ends.
//
// It fails the test when PostgreSQL is not installed (run `make deps`),
// and skips it under -short (SkipShort). Run the package's tests through
// Main, which stops the server.
func Postgres(t testing.TB) string {
	t.Helper()
	SkipShort(t, "tests on a PostgreSQL server")
	pg.once.Do(func() { pg.srv, pg.err = startPostgres() })
	if pg.err != nil {
		t.Fatalf("testenv: PostgreSQL: %v", pg.err)
	}
	s := pg.srv
	name := fmt.Sprintf("t%d_%s", s.seq.Add(1), pgRandomHex(4))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.admin.ExecContext(ctx, `CREATE DATABASE "`+name+`"`); err != nil {
		t.Fatalf("testenv: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = s.admin.ExecContext(ctx, `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`)
	})
	return s.dsn(name)
}

func (s *pgServer) dsn(db string) string {
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", postgresUser, s.password, s.port, db)
}

// stopPostgres stops this process's PostgreSQL server, if it started, and
// removes its data. Main calls it through the exit hooks; it is safe to
// call more than once.
func stopPostgres() {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	if pg.done || pg.srv == nil {
		return
	}
	pg.done = true
	pg.srv.stop()
}

// pgBinDir finds the folder holding initdb and postgres: Debian's
// /usr/lib/postgresql/<version>/bin (newest version first), then PATH.
func pgBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	version := func(d string) int {
		v, _ := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		return v
	}
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if pgIsExec(filepath.Join(d, "initdb")) && pgIsExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		d := filepath.Dir(p)
		if pgIsExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errors.New("initdb and postgres not found in /usr/lib/postgresql/*/bin or on PATH: run `make deps` (scripts/test-deps.sh installs Debian's postgresql)")
}

func pgIsExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// pgCredential returns the credential to run PostgreSQL with: nil when we
// are not root, else the postgres user's (initdb and postgres refuse root).
func pgCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(postgresUser)
	if err != nil {
		return nil, fmt.Errorf("running as root, PostgreSQL must run as user %q: %w", postgresUser, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("user %q has a non-numeric uid or gid", postgresUser)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func startPostgres() (*pgServer, error) {
	bin, err := pgBinDir()
	if err != nil {
		return nil, err
	}
	cred, err := pgCredential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "parqdb-pg-")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*pgServer, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	password := pgRandomHex(16)
	pwfile := filepath.Join(dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(password+"\n"), 0o600); err != nil {
		return fail(err)
	}
	if cred != nil {
		for _, p := range []string{dir, pwfile} {
			if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
				return fail(fmt.Errorf("chown %s to %s: %w", p, postgresUser, err))
			}
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", postgresUser,
		"--pwfile", pwfile, "--auth-local=trust", "--auth-host=scram-sha-256",
		"-E", "UTF8", "--locale=C", "--no-sync")
	initdb.Dir = dir
	initdb.Env = pgEnv()
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %w: %s", err, strings.TrimSpace(string(out))))
	}
	_ = os.Remove(pwfile)
	var errs []error
	for attempt := 0; attempt < 5; attempt++ {
		srv, err := pgStartOnce(bin, dir, data, password, cred)
		if err == nil {
			atExit(stopPostgres)
			return srv, nil
		}
		errs = append(errs, err)
	}
	return fail(errors.Join(errs...))
}

// pgStartOnce starts the postmaster on a port that was free a moment ago
// and waits until it accepts an authenticated connection.
func pgStartOnce(bin, dir, data, password string, cred *syscall.Credential) (*pgServer, error) {
	port, err := pgFreePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=200", "-c", "log_min_messages=warning")
	cmd.Dir = dir
	cmd.Env = pgEnv()
	var logs pgLog
	cmd.Stdout = &logs
	cmd.Stderr = &logs
	cmd.SysProcAttr = pgSysProcAttr(cred)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	srv := &pgServer{port: port, password: password, dir: dir}
	kill := func() {
		// SIGINT is PostgreSQL's fast shutdown: it ends sessions and exits.
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	admin, err := sql.Open("pgx", srv.dsn("postgres"))
	if err != nil {
		kill()
		return nil, err
	}
	srv.admin = admin
	srv.stop = func() {
		admin.Close()
		kill()
		os.RemoveAll(dir)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = admin.PingContext(ctx)
		cancel()
		if err == nil {
			return srv, nil
		}
		select {
		case <-exited:
			admin.Close()
			return nil, fmt.Errorf("postgres on port %d exited: %s", port, logs.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			admin.Close()
			kill()
			return nil, fmt.Errorf("postgres on port %d not ready after 30s: %v; log: %s", port, err, logs.String())
		}
	}
}

// pgEnv is a minimal environment: PG* variables from the developer's shell
// must not change the cluster.
func pgEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "TZ=UTC"}
}

func pgFreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func pgRandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// pgLog keeps the server's last 8 KiB of output for error messages.
type pgLog struct {
	mu  sync.Mutex
	buf []byte
}

func (l *pgLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if len(l.buf) > 8<<10 {
		l.buf = append([]byte(nil), l.buf[len(l.buf)-8<<10:]...)
	}
	return len(p), nil
}

func (l *pgLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.TrimSpace(string(l.buf))
}
