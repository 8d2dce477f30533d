package web

import (
	"context"
	"sync"
	"time"

	"github.com/zrviz/zrviz/player"
)

// Outline cache limits.
const (
	maxOutlines = 16
	// outlineTimeout bounds the lockstep pass of one run (a 64 GiB file in both modes takes
	// seconds); past it the request fails rather than holding a core forever.
	outlineTimeout = 2 * time.Minute
)

// outlineCache keeps recent outlines so reconnects, mode switches and the viewers of one run pay for
// the pass once. Concurrent requests for the same run wait for one pass, which is cancelled when
// every one of them has gone. A cached outline's memory (Outline.Bytes) is charged to the budget
// until it is evicted; one that does not fit is handed to its waiters and not kept.
type outlineCache struct {
	mu     sync.Mutex
	m      map[string]*outlineEntry
	order  []string // oldest first
	budget *budget  // nil: cached outlines are not charged
}

type outlineEntry struct {
	done    chan struct{}
	o       *player.Outline
	err     error
	waiters int
	cancel  context.CancelFunc
	charged int64 // bytes of the budget the cached outline holds
}

func newOutlineCache(b *budget) *outlineCache {
	return &outlineCache{m: map[string]*outlineEntry{}, budget: b}
}

// removeLocked drops key's entry if it is e, giving back what it held.
func (c *outlineCache) removeLocked(key string, e *outlineEntry) {
	if c.m[key] != e {
		return
	}
	delete(c.m, key)
	for i, k := range c.order {
		if k == key {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
	c.budget.give(e.charged)
	e.charged = 0
}

func (c *outlineCache) get(ctx context.Context, key string, build func(context.Context) (*player.Outline, error)) (*player.Outline, error) {
	c.mu.Lock()
	e, ok := c.m[key]
	if !ok {
		bctx, cancel := context.WithTimeout(context.Background(), outlineTimeout)
		e = &outlineEntry{done: make(chan struct{}), cancel: cancel}
		c.m[key] = e
		c.order = append(c.order, key)
		if len(c.order) > maxOutlines {
			c.removeLocked(c.order[0], c.m[c.order[0]])
		}
		go func() {
			defer cancel()
			o, err := build(bctx)
			c.mu.Lock()
			e.o, e.err = o, err
			switch {
			case err != nil:
				c.removeLocked(key, e)
			case c.m[key] == e && !c.budget.take(o.Bytes(), false):
				c.removeLocked(key, e) // the budget is spent: the waiters get it, the cache does not keep it
			case c.m[key] == e:
				e.charged = o.Bytes()
			}
			c.mu.Unlock()
			close(e.done)
		}()
	}
	e.waiters++
	c.mu.Unlock()
	select {
	case <-e.done:
		c.mu.Lock()
		e.waiters--
		c.mu.Unlock()
		return e.o, e.err
	case <-ctx.Done():
		c.mu.Lock()
		e.waiters--
		if e.waiters == 0 {
			select {
			case <-e.done:
			default:
				// Nobody wants it any more: stop the pass, and let a later request start afresh.
				e.cancel()
				c.removeLocked(key, e)
			}
		}
		c.mu.Unlock()
		return nil, ctx.Err()
	}
}
