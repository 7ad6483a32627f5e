// Command scale measures what several banter processes sharing one bot do against one: text
// turns answered per second and what each turn costs — Postgres round trips (store calls, each
// one statement), Discord REST requests, CPU — for 1 process running all shards and for 3
// processes splitting them (0-1, 2 and 3 of 4), on one throwaway PostgreSQL:
//
//	go run ./bench/scale [-guilds 16] [-turns 20] [-processes 1,3]
//
// Each process is the real `banter run`, built from ./cmd/banter; the Discord simulator (sharded
// like Discord, with its 50 requests a second global REST limit) and the OpenAI simulator run in
// this process, on the same cores. Every guild holds a conversation: a member asks the bot, waits
// for the answer, asks again, -turns times; all guilds talk at once. Not part of make test.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/banterbot/banter/discord"
	discordsim "github.com/banterbot/banter/sim/discord"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store/pgtest"
)

const shardCount = 4

func main() {
	guilds := flag.Int("guilds", 16, "guilds, each with one conversation running at the same time as the others")
	turns := flag.Int("turns", 20, "questions asked in each guild, one after the other")
	procList := flag.String("processes", "1,3", "process counts to measure, comma-separated (each splits 4 shards)")
	latency := flag.Duration("model-latency", 50*time.Millisecond, "the OpenAI simulator's time to first token")
	flag.Parse()
	var counts []int
	for _, f := range strings.Split(*procList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > shardCount {
			fmt.Fprintf(os.Stderr, "scale: -processes: %q is not a count from 1 to %d\n", f, shardCount)
			os.Exit(2)
		}
		counts = append(counts, n)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, counts, *guilds, *turns, *latency); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

// result is one measured configuration.
type result struct {
	processes      int
	turns          int
	elapsed        time.Duration
	storeCalls     float64 // banter_store_operations_total over the measured turns, all processes
	storeByOp      map[string]float64
	rest           int // REST requests the simulator received during the measured turns
	tooMany        int // of which answered 429
	cpuSeconds     float64
	pgXacts        float64 // Postgres transactions over the whole run (start-up included)
	storeCallsRun  float64 // store calls over the whole run, to set pgXacts against
	answeredOnce   int
	answeredTwice  int
	unansweredTurn int
}

func run(ctx context.Context, counts []int, guilds, turns int, latency time.Duration) error {
	dir, err := os.MkdirTemp("", "banter-scale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "banter")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/banter").CombinedOutput(); err != nil {
		return fmt.Errorf("build banter (run from the repository root): %v\n%s", err, out)
	}
	pg, err := pgtest.Start(ctx)
	if err != nil {
		return err
	}
	defer pg.Stop()
	var results []result
	for _, n := range counts {
		r, err := measure(ctx, dir, bin, pg, n, guilds, turns, latency)
		if err != nil {
			return fmt.Errorf("%d processes: %w", n, err)
		}
		results = append(results, r)
	}
	report(results, guilds, turns)
	return nil
}

// cluster is one measured configuration's world: simulators, database and processes.
type cluster struct {
	dsim     *discordsim.Server
	osim     *openaisim.Server
	dsn      string
	procs    []*exec.Cmd
	metrics  []string // each process's metrics address
	users    []discordsim.UserID
	channels []discordsim.ChannelID
}

func measure(ctx context.Context, dir, bin string, pg *pgtest.Cluster, n, guilds, turns int, latency time.Duration) (result, error) {
	c, err := newCluster(ctx, pg, guilds, latency)
	if err != nil {
		return result{}, err
	}
	defer c.close()
	if err := c.start(ctx, dir, bin, n); err != nil {
		return result{}, err
	}
	defer c.stop()
	// Warm up (connections, prepared statements, caches): one turn per guild.
	if _, err := c.converse(ctx, 1, "warm-up"); err != nil {
		return result{}, err
	}
	before, err := c.scrapeAll()
	if err != nil {
		return result{}, err
	}
	restBefore := len(c.dsim.RESTLog())
	start := time.Now()
	asked, err := c.converse(ctx, turns, "question")
	if err != nil {
		return result{}, err
	}
	r := result{processes: n, turns: len(asked), elapsed: time.Since(start)}
	after, err := c.scrapeAll()
	if err != nil {
		return result{}, err
	}
	for _, req := range c.dsim.RESTLog()[restBefore:] {
		r.rest++
		if req.Status == http.StatusTooManyRequests {
			r.tooMany++
		}
	}
	r.storeCalls = after.storeCalls - before.storeCalls
	r.storeByOp = map[string]float64{}
	for op, v := range after.storeByOp {
		r.storeByOp[op] = v - before.storeByOp[op]
	}
	r.cpuSeconds = after.cpuSeconds - before.cpuSeconds
	r.storeCallsRun = after.storeCalls
	replies := map[discordsim.MessageID]int{}
	for _, m := range c.dsim.Sent() {
		if m.Author == c.dsim.BotID() && m.ReplyTo() != "" {
			replies[m.ReplyTo()]++
		}
	}
	for _, id := range asked {
		switch replies[id] {
		case 0:
			r.unansweredTurn++
		case 1:
			r.answeredOnce++
		default:
			r.answeredTwice++
		}
	}
	c.stop() // the backends flush their statistics as they exit
	if r.pgXacts, err = transactions(ctx, c.dsn); err != nil {
		return result{}, err
	}
	return r, nil
}

func newCluster(ctx context.Context, pg *pgtest.Cluster, guilds int, latency time.Duration) (*cluster, error) {
	dsn, err := pg.NewDatabase(ctx)
	if err != nil {
		return nil, err
	}
	dsim := discordsim.New(discordsim.WithShards(shardCount, shardCount))
	if err := dsim.Start("127.0.0.1:0"); err != nil {
		return nil, err
	}
	osim, err := openaisim.Start("127.0.0.1:0", openaisim.WithLatency(openaisim.Latency{TimeToFirstToken: latency}))
	if err != nil {
		dsim.Close()
		return nil, err
	}
	c := &cluster{dsim: dsim, osim: osim, dsn: dsn}
	for i := range guilds {
		g := dsim.CreateGuild("guild" + strconv.Itoa(i))
		u := dsim.CreateUser("member" + strconv.Itoa(i))
		dsim.AddMember(g, u)
		c.users = append(c.users, u)
		c.channels = append(c.channels, dsim.CreateTextChannel(g, "general"))
	}
	return c, nil
}

func (c *cluster) close() {
	c.osim.Close()
	c.dsim.Close()
}

// start runs n processes, process i running the shards s with s % n == i, and waits until every
// shard has identified.
func (c *cluster) start(ctx context.Context, dir, bin string, n int) error {
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		addr := ln.Addr().String()
		ln.Close()
		cfg := fmt.Sprintf(`discord:
  apiUrl: %s
  shards: "%d"
  registerSlashCommands: false
store:
  driver: postgres
  dsn: %s
metrics:
  listen: %s
activity:
  replyCoalesceWindowSeconds: 0
  maxPromptsPerHour: 100000
voice:
  enabled: false
log:
  level: warn
`, c.dsim.APIBaseURL(), shardCount, c.dsn, addr)
		cfgPath := filepath.Join(dir, fmt.Sprintf("banter-%d-%d.yaml", n, i))
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
			return err
		}
		var ids []string
		for _, s := range discord.ProcessShards(shardCount, n, i) {
			ids = append(ids, strconv.Itoa(s))
		}
		cmd := exec.CommandContext(ctx, bin, "run", "-config", cfgPath)
		cmd.Env = append(os.Environ(), "DISCORD_TOKEN="+c.dsim.Token(), "OPENAI_BASE_URL="+c.osim.BaseURL(),
			"OPENAI_API_KEY=sk-scale", "BANTER_SHARD_IDS="+strings.Join(ids, ","))
		logFile, err := os.Create(filepath.Join(dir, fmt.Sprintf("banter-%d-%d.log", n, i)))
		if err != nil {
			return err
		}
		cmd.Stdout, cmd.Stderr = logFile, logFile
		if err := cmd.Start(); err != nil {
			logFile.Close()
			return err
		}
		logFile.Close() // the child holds its own descriptor
		c.procs = append(c.procs, cmd)
		c.metrics = append(c.metrics, addr)
	}
	wait, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	identified := func() bool {
		n := 0
		for _, e := range c.dsim.GatewayEvents() {
			if e.Kind == discordsim.GatewayIdentified {
				n++
			}
		}
		return n >= shardCount
	}
	if err := c.dsim.Await(wait, identified); err != nil {
		return fmt.Errorf("not every shard identified (logs in %s): %w", dir, err)
	}
	return nil
}

func (c *cluster) stop() {
	for _, p := range c.procs {
		if p.ProcessState == nil {
			_ = p.Process.Signal(syscall.SIGTERM)
			_ = p.Wait()
		}
	}
}

// converse runs one conversation per guild, all at once: turns questions each, every one
// waiting for the answer to the one before. It returns the questions' ids.
func (c *cluster) converse(ctx context.Context, turns int, what string) ([]discordsim.MessageID, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	var mu sync.Mutex
	var asked []discordsim.MessageID
	errs := make(chan error, len(c.channels))
	var wg sync.WaitGroup
	for g, ch := range c.channels {
		wg.Go(func() {
			for i := range turns {
				m, err := c.dsim.Post(ctx, c.users[g], ch, fmt.Sprintf("hey banter, %s %d in guild %d?", what, i, g))
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				asked = append(asked, m.ID)
				mu.Unlock()
				answered := func() bool {
					return slices.ContainsFunc(c.dsim.Sent(), func(r discordsim.Message) bool {
						return r.Author == c.dsim.BotID() && r.ReplyTo() == m.ID
					})
				}
				if err := c.dsim.Await(ctx, answered); err != nil {
					errs <- fmt.Errorf("%s %d in guild %d not answered: %w", what, i, g, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return asked, errors.Join(slices.Collect(func(yield func(error) bool) {
		for err := range errs {
			if !yield(err) {
				return
			}
		}
	})...)
}

// sample is what the processes' metrics say, summed over the processes.
type sample struct {
	storeCalls float64
	storeByOp  map[string]float64
	cpuSeconds float64
}

func (c *cluster) scrapeAll() (sample, error) {
	s := sample{storeByOp: map[string]float64{}}
	for _, addr := range c.metrics {
		if err := scrape(addr, &s); err != nil {
			return s, fmt.Errorf("metrics of %s: %w", addr, err)
		}
	}
	return s, nil
}

func scrape(addr string, s *sample) error {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		name, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch {
		case strings.HasPrefix(name, "banter_store_operations_total{"):
			s.storeCalls += v
			op := name[strings.Index(name, `op="`)+4:]
			s.storeByOp[op[:strings.IndexByte(op, '"')]] += v
		case name == "process_cpu_seconds_total":
			s.cpuSeconds += v
		}
	}
	return sc.Err()
}

// transactions is how many transactions the database committed or rolled back: each store call
// outside a transaction is one (pgx sends one statement per round trip once it is prepared).
func transactions(ctx context.Context, dsn string) (float64, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var n float64
	err = conn.QueryRow(ctx, `SELECT (xact_commit + xact_rollback)::float8 FROM pg_stat_database WHERE datname = current_database()`).Scan(&n)
	return n, err
}

func report(results []result, guilds, turns int) {
	host, _ := os.Hostname()
	load := ""
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(data))[:3], " ")
	}
	fmt.Printf("bench/scale: %s, %d CPUs (GOMAXPROCS %d), load %s, %s; %d guilds × %d turns, %d shards\n",
		host, runtime.NumCPU(), runtime.GOMAXPROCS(0), load, time.Now().UTC().Format("2006-01-02 15:04 UTC"), guilds, turns, shardCount)
	fmt.Printf("%-9s %6s %9s %8s %11s %11s %10s %6s %10s %9s\n", "processes", "turns", "elapsed", "turns/s",
		"store/turn", "pg_xact/op", "rest/turn", "429s", "cpu_ms/turn", "answered")
	for _, r := range results {
		xactPerCall := 0.0
		if r.storeCallsRun > 0 {
			xactPerCall = r.pgXacts / r.storeCallsRun
		}
		t := float64(r.turns)
		fmt.Printf("%-9d %6d %9s %8.1f %11.2f %11.2f %10.2f %6d %10.1f %4d/%d\n", r.processes, r.turns,
			r.elapsed.Round(10*time.Millisecond), t/r.elapsed.Seconds(), r.storeCalls/t, xactPerCall,
			float64(r.rest)/t, r.tooMany, 1000*r.cpuSeconds/t, r.answeredOnce, r.turns)
	}
	for _, r := range results {
		var ops []string
		for op, v := range r.storeByOp {
			if v > 0 {
				ops = append(ops, fmt.Sprintf("%s %.2f", op, v/float64(r.turns)))
			}
		}
		slices.Sort(ops)
		fmt.Printf("store calls per turn, %d process(es): %s\n", r.processes, strings.Join(ops, ", "))
		if r.rest > 0 {
			fmt.Printf("  Discord's global REST limit (%d requests/s per bot) allows about %.1f turns/s at %.2f requests per turn\n",
				discord.GlobalRESTLimit, discord.GlobalRESTLimit*float64(r.turns)/float64(r.rest), float64(r.rest)/float64(r.turns))
		}
		if r.answeredTwice > 0 || r.unansweredTurn > 0 {
			fmt.Printf("  %d answered more than once, %d not answered\n", r.answeredTwice, r.unansweredTurn)
		}
	}
}
