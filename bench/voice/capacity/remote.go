package capacity

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The parent and the world process talk over the child's stdin and stdout,
// one JSON message a line: the parent sends setup, the child answers info;
// the parent sends talk, the child answers talked when the phase is over;
// the parent closes stdin, the child closes the world and exits. Any
// failure is answered with error.
type message struct {
	Setup  *WorldSetup `json:"setup,omitempty"`
	Info   *WorldInfo  `json:"info,omitempty"`
	Talk   *TalkPlan   `json:"talk,omitempty"`
	Talked *TalkResult `json:"talked,omitempty"`
	Error  string      `json:"error,omitempty"`
}

// ServeWorld is the world process's side: it lowers its own CPU priority
// to prio, then runs w as the parent's messages on in say, answering on
// out, until in ends (then it closes w).
func ServeWorld(ctx context.Context, in io.Reader, out io.Writer, w World, prio Priority) (err error) {
	if err := prio.apply(); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, w.Close()) }()
	dec, enc := json.NewDecoder(bufio.NewReader(in)), json.NewEncoder(out)
	for {
		var m message
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("capacity: world: read: %w", err)
		}
		var reply message
		switch {
		case m.Setup != nil:
			info, err := w.Setup(ctx, *m.Setup)
			info.Sched = prio.String()
			reply = message{Info: &info, Error: errString(err)}
		case m.Talk != nil:
			res, err := w.Talk(ctx, *m.Talk)
			reply = message{Talked: &res, Error: errString(err)}
		default:
			reply = message{Error: "capacity: world: unknown message"}
		}
		if err := enc.Encode(reply); err != nil {
			return fmt.Errorf("capacity: world: write: %w", err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Priority is the world process's CPU scheduling. Idle puts its threads in
// the SCHED_IDLE class: they run only on a core no other thread wants, and
// a bot thread that wakes up takes the core from them at once, as if the
// world were on another machine, as long as the machine has the spare CPU
// (WorldHealth says whether it had). Otherwise Nice is their niceness in
// the normal class, where a waking bot thread preempts a world thread only
// when the fair scheduler picks it.
type Priority struct {
	Idle bool
	Nice int
}

// String returns "idle" or e.g. "nice10".
func (p Priority) String() string {
	if p.Idle {
		return "idle"
	}
	return "nice" + strconv.Itoa(p.Nice)
}

// apply sets p on every thread of this process (the scheduling class and
// niceness are per thread on Linux; threads started later inherit their
// creator's). A few passes catch threads the runtime starts meanwhile.
func (p Priority) apply() error {
	if p == (Priority{}) {
		return nil
	}
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL, Nice: int32(p.Nice)}
	if p.Idle {
		attr.Policy, attr.Nice = unix.SCHED_IDLE, 0
	}
	for range 3 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("capacity: world priority: %w", err)
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			if err := unix.SchedSetAttr(tid, &attr, 0); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("capacity: world priority %v for thread %d: %w", p, tid, err)
			}
		}
	}
	return nil
}

// RemoteWorld is a World in a child process (ServeWorld at its end).
type RemoteWorld struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	dec *json.Decoder
	enc *json.Encoder
	mu  sync.Mutex // one exchange at a time
}

// StartWorld starts cmd (a program that runs ServeWorld on its stdin and
// stdout; its stderr is left as cmd has it) and returns its World.
func StartWorld(cmd *exec.Cmd) (*RemoteWorld, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("capacity: start world: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("capacity: start world: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("capacity: start world: %w", err)
	}
	return &RemoteWorld{cmd: cmd, in: in, dec: json.NewDecoder(bufio.NewReader(out)), enc: json.NewEncoder(in)}, nil
}

// Pid returns the world process's id.
func (w *RemoteWorld) Pid() int { return w.cmd.Process.Pid }

func (w *RemoteWorld) exchange(ctx context.Context, m message) (message, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.enc.Encode(m); err != nil {
		return message{}, fmt.Errorf("capacity: world: send: %w", err)
	}
	got := make(chan error, 1)
	var reply message
	go func() { got <- w.dec.Decode(&reply) }()
	select {
	case err := <-got:
		if err != nil {
			return reply, fmt.Errorf("capacity: world: receive: %w", err)
		}
	case <-ctx.Done():
		_ = w.cmd.Process.Kill()
		<-got
		return reply, fmt.Errorf("capacity: world: %w", ctx.Err())
	}
	if reply.Error != "" {
		return reply, fmt.Errorf("capacity: world: %s", reply.Error)
	}
	return reply, nil
}

// Setup implements World.
func (w *RemoteWorld) Setup(ctx context.Context, s WorldSetup) (WorldInfo, error) {
	r, err := w.exchange(ctx, message{Setup: &s})
	if err != nil {
		return WorldInfo{}, err
	}
	if r.Info == nil {
		return WorldInfo{}, errors.New("capacity: world: setup answered without info")
	}
	return *r.Info, nil
}

// Talk implements World.
func (w *RemoteWorld) Talk(ctx context.Context, t TalkPlan) (TalkResult, error) {
	r, err := w.exchange(ctx, message{Talk: &t})
	if err != nil {
		return TalkResult{}, err
	}
	if r.Talked == nil {
		return TalkResult{}, errors.New("capacity: world: talk answered without a result")
	}
	return *r.Talked, nil
}

// Close implements World: it closes the child's stdin and waits for it to
// close its world and exit (killing it after 30 s).
func (w *RemoteWorld) Close() error {
	_ = w.in.Close()
	exited := make(chan error, 1)
	go func() { exited <- w.cmd.Wait() }()
	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	select {
	case err := <-exited:
		if err != nil {
			return fmt.Errorf("capacity: world exit: %w", err)
		}
		return nil
	case <-t.C:
		_ = w.cmd.Process.Kill()
		return fmt.Errorf("capacity: world did not exit: %w", <-exited)
	}
}
