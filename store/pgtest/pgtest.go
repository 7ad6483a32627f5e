// Package pgtest runs a throwaway PostgreSQL cluster for tests: initdb into a temporary folder,
// a server on a free loopback port, one fresh database per caller, everything removed on Stop.
//
// It needs the server binaries (Debian's postgresql package; `make test` installs it). PostgreSQL
// refuses to run as root, so when the test runs as root the cluster runs as the unprivileged
// user named by BANTER_PG_USER (default "postgres", which Debian's package creates).
//
// Only tests and benchmarks import this package.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoServer is returned by Start when no PostgreSQL server binaries are installed.
var ErrNoServer = errors.New("pgtest: no PostgreSQL server binaries (initdb, pg_ctl) found: install Debian's postgresql package (make test does)")

// Cluster is one running throwaway server.
type Cluster struct {
	dir    string // data folder, socket folder and log live under it
	bin    string // folder holding initdb, pg_ctl and postgres
	port   int
	cred   *syscall.Credential // nil when not root
	seq    atomic.Int64
	prefix string
}

// Start creates and starts a cluster. Stop it with Stop.
func Start(ctx context.Context) (*Cluster, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, prefix: fmt.Sprintf("t%d_", os.Getpid())}
	if os.Geteuid() == 0 {
		name := os.Getenv("BANTER_PG_USER")
		if name == "" {
			name = "postgres"
		}
		if c.cred, err = credentialOf(name); err != nil {
			return nil, err
		}
	}
	c.dir, err = os.MkdirTemp("", "banter-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: temp dir: %w", err)
	}
	if c.cred != nil {
		if err := os.Chown(c.dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			c.remove()
			return nil, fmt.Errorf("pgtest: chown %s: %w", c.dir, err)
		}
	}
	data := filepath.Join(c.dir, "data")
	if out, err := c.run(ctx, "initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"); err != nil {
		c.remove()
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	// A port taken between the probe and the server's bind makes pg_ctl fail: try a few.
	for attempt := 0; ; attempt++ {
		c.port, err = freePort()
		if err != nil {
			c.remove()
			return nil, err
		}
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", c.port, c.dir)
		out, err := c.run(ctx, "pg_ctl", "-D", data, "-l", filepath.Join(c.dir, "log"), "-o", opts, "-w", "-t", "120", "start")
		if err == nil {
			break
		}
		if attempt == 4 {
			logText, _ := os.ReadFile(filepath.Join(c.dir, "log"))
			c.remove()
			return nil, fmt.Errorf("pgtest: pg_ctl start: %w\n%s\n%s", err, out, logText)
		}
	}
	return c, nil
}

// DSN is the connection string of the cluster's default database.
func (c *Cluster) DSN() string { return c.dsnFor("postgres") }

func (c *Cluster) dsnFor(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// NewDatabase creates an empty database and returns its connection string, so each test
// starts from nothing while sharing one server.
func (c *Cluster) NewDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("%sdb%d", c.prefix, c.seq.Add(1))
	conn, err := pgx.Connect(ctx, c.DSN())
	if err != nil {
		return "", fmt.Errorf("pgtest: connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return c.dsnFor(name), nil
}

// Stop shuts the server down and removes its files.
func (c *Cluster) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := c.run(ctx, "pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "immediate", "-w", "stop")
	c.remove()
	if err != nil {
		return fmt.Errorf("pgtest: pg_ctl stop: %w\n%s", err, out)
	}
	return nil
}

func (c *Cluster) remove() { os.RemoveAll(c.dir) }

func (c *Cluster) run(ctx context.Context, tool string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, tool), args...)
	cmd.Dir = c.dir
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
		cmd.Env = append(os.Environ(), "HOME="+c.dir)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// findBin looks for the server binaries: BANTER_PG_BIN, then PATH, then Debian's versioned folders.
func findBin() (string, error) {
	if dir := os.Getenv("BANTER_PG_BIN"); dir != "" {
		return dir, nil
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	best, bestVersion := "", -1
	for _, m := range matches {
		v, err := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(m))))
		if err == nil && v > bestVersion {
			best, bestVersion = filepath.Dir(m), v
		}
	}
	if best == "" {
		return "", ErrNoServer
	}
	return best, nil
}

func credentialOf(name string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root needs an unprivileged user for the server (BANTER_PG_USER, default postgres): %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("pgtest: user %s has a non-numeric uid/gid %q/%q", name, u.Uid, u.Gid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: find a free port: %w", err)
	}
	defer l.Close()
	_, port, _ := strings.Cut(l.Addr().String(), ":")
	return strconv.Atoi(port)
}

// Database starts a cluster for one test and returns the DSN of a fresh database in it; the
// cluster stops at the test's cleanup. Without the server binaries the test is skipped, unless
// BANTER_REQUIRE_POSTGRES is set (make test sets it): then it fails.
func Database(ctx context.Context, t testing.TB) string {
	t.Helper()
	c, err := Start(ctx)
	if errors.Is(err, ErrNoServer) && os.Getenv("BANTER_REQUIRE_POSTGRES") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	dsn, err := c.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}
