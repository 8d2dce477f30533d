package web

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/request"
)

// maxResolved bounds the inputs kept by a resolvedCache.
const maxResolved = 8

// resolvedCache keeps the engine input a run's earlier operations leave (each a whole simulation
// of the file), so a view resolves its run once: the player page simulates them, and its websocket,
// a reconnect or a mode switch reuse the result instead of simulating them again. Keys hold the
// stored image's identity, so a re-uploaded id never reuses another image's state.
//
// A kept input's memory (resolvedBytes) is charged to the budget until it is evicted, as a cached
// outline is; one that does not fit is handed to its request and not kept.
type resolvedCache struct {
	mu       sync.Mutex
	m        map[string]resolvedEntry
	order    []string // oldest first
	misses   int      // simulations of earlier operations, for tests
	prepares int      // played zeros' writebacks (keys with preparePrefix), for tests
	budget   *budget  // nil: kept inputs are not charged
	charged  int64    // bytes of the budget the kept inputs hold
	// inflight are the builds under way: a request for the same key waits for one instead of
	// simulating the same operations beside it (issue 37: twelve concurrent GETs of one run each
	// replayed it).
	inflight map[string]*resolvedFlight
}

// resolvedFlight is a build under way; done is closed when in and err are set.
type resolvedFlight struct {
	done chan struct{}
	in   core.Input
	err  error
}

type resolvedEntry struct {
	in      core.Input
	charged int64
}

func newResolvedCache(b *budget) *resolvedCache {
	return &resolvedCache{m: map[string]resolvedEntry{}, budget: b, inflight: map[string]*resolvedFlight{}}
}

// preparePrefix starts the key of a played zero's input after the writeback of its range
// (Server.prepareZero), kept beside the inputs its operations leave.
const preparePrefix = "prepare\x00"

func resolvedKey(si *StoredImage, path string, before []request.Op) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%p\x00%s\x00%s", si, si.ID, path)
	for _, op := range before {
		b.WriteString("\x00" + op.OpLine(0))
	}
	return b.String()
}

// has reports whether key's input is cached.
func (c *resolvedCache) has(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.m[key]
	return ok
}

// get returns the input for key, computing it with build on a miss; build also says what the
// input holds of memory (resolvedBytes), charged while it is kept. While another request builds the
// same key, get waits for it (as long as ctx lasts) and takes its input; if that build failed (its
// client left, the budget refused it, the model refused the operations) get builds on its own.
func (c *resolvedCache) get(ctx context.Context, key string, build func() (core.Input, int64, error)) (core.Input, error) {
	c.mu.Lock()
	e, ok := c.m[key]
	f, waiting := c.inflight[key]
	if !ok && !waiting {
		f = &resolvedFlight{done: make(chan struct{})}
		c.inflight[key] = f
	}
	c.mu.Unlock()
	switch {
	case ok:
		return e.in, nil
	case waiting:
		select {
		case <-f.done:
			if f.err == nil {
				return f.in, nil
			}
			return c.keep(key, build) // its error may be its own (a client that left): try ours
		case <-ctx.Done():
			return core.Input{}, ctx.Err()
		}
	}
	// Waiters are let go however the build ends (a panic included: they then build on their own).
	f.err = errors.New("web: a shared build of the operations did not finish")
	defer func() {
		c.mu.Lock()
		delete(c.inflight, key)
		c.mu.Unlock()
		close(f.done)
	}()
	f.in, f.err = c.keep(key, build)
	return f.in, f.err
}

// keep builds key's input and keeps it.
func (c *resolvedCache) keep(key string, build func() (core.Input, int64, error)) (core.Input, error) {
	in, size, err := build()
	if err != nil {
		return in, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if strings.HasPrefix(key, preparePrefix) {
		c.prepares++
	} else {
		c.misses++
	}
	if _, ok := c.m[key]; ok || !c.budget.take(size, false) {
		return in, nil // kept by another request, or the budget is spent: served, not kept
	}
	c.m[key] = resolvedEntry{in: in, charged: size}
	c.charged += size
	c.order = append(c.order, key)
	if len(c.order) > maxResolved {
		old := c.m[c.order[0]]
		c.budget.give(old.charged)
		c.charged -= old.charged
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	return in, nil
}
