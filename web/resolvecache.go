package web

import (
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
type resolvedCache struct {
	mu     sync.Mutex
	m      map[string]core.Input
	order  []string // oldest first
	misses int      // simulations of earlier operations, for tests
}

func newResolvedCache() *resolvedCache { return &resolvedCache{m: map[string]core.Input{}} }

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

// get returns the input for key, computing it with build on a miss.
func (c *resolvedCache) get(key string, build func() (core.Input, error)) (core.Input, error) {
	c.mu.Lock()
	in, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return in, nil
	}
	in, err := build()
	if err != nil {
		return in, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.misses++
	if _, ok := c.m[key]; !ok {
		c.m[key] = in
		c.order = append(c.order, key)
		if len(c.order) > maxResolved {
			delete(c.m, c.order[0])
			c.order = c.order[1:]
		}
	}
	return in, nil
}
