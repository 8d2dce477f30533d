package web

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/zrviz/zrviz/player"
)

// TestOutlineCacheCancel: when the only caller leaves, the pass is cancelled (the build sees its
// context end) and the entry goes, so the next caller builds afresh. No timing: the build blocks
// until its context ends.
func TestOutlineCacheCancel(t *testing.T) {
	c := newOutlineCache(nil)
	started, cancelled := make(chan struct{}), make(chan struct{})
	var builds atomic.Int32
	block := func(ctx context.Context) (*player.Outline, error) {
		builds.Add(1)
		close(started)
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.get(ctx, "k", block)
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("get after the caller left: %v", err)
	}
	<-cancelled // the pass saw its context end
	o, err := c.get(context.Background(), "k", func(context.Context) (*player.Outline, error) {
		builds.Add(1)
		return &player.Outline{}, nil
	})
	if err != nil || o == nil || builds.Load() != 2 {
		t.Fatalf("the next get: %v %v after %d builds; want a fresh build", o, err, builds.Load())
	}
}

// TestOutlineCacheSharedWait: a pass two callers wait for goes on when one leaves, and both the
// remaining caller and a later one get its outline without another build.
func TestOutlineCacheSharedWait(t *testing.T) {
	c := newOutlineCache(nil)
	release := make(chan struct{})
	var builds atomic.Int32
	var bctx context.Context
	build := func(ctx context.Context) (*player.Outline, error) {
		builds.Add(1)
		bctx = ctx
		<-release
		return &player.Outline{Total: 7}, nil
	}
	leaving, cancel := context.WithCancel(context.Background())
	left := make(chan error, 1)
	staying := make(chan *player.Outline, 1)
	go func() {
		_, err := c.get(leaving, "k", build)
		left <- err
	}()
	// The second waiter joins once the entry exists (it is made under the lock before get waits).
	for {
		c.mu.Lock()
		_, ok := c.m["k"]
		c.mu.Unlock()
		if ok {
			break
		}
	}
	go func() {
		o, _ := c.get(context.Background(), "k", build)
		staying <- o
	}()
	for {
		c.mu.Lock()
		n := c.m["k"].waiters
		c.mu.Unlock()
		if n == 2 {
			break
		}
	}
	cancel()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Fatalf("the leaving caller: %v", err)
	}
	close(release)
	if o := <-staying; o == nil || o.Total != 7 {
		t.Fatalf("the staying caller got %v", o)
	}
	if bctx.Err() != nil && !errors.Is(bctx.Err(), context.Canceled) {
		t.Fatalf("build context: %v", bctx.Err())
	}
	if o, err := c.get(context.Background(), "k", build); err != nil || o.Total != 7 || builds.Load() != 1 {
		t.Fatalf("a later get: %v %v after %d builds; want the cached outline", o, err, builds.Load())
	}
}

// TestOutlineCacheBudget: a cached outline holds its Bytes of the budget until evicted; one that does
// not fit is returned but not kept.
func TestOutlineCacheBudget(t *testing.T) {
	one := (&player.Outline{}).Bytes()
	b := &budget{limit: one * maxOutlines}
	c := newOutlineCache(b)
	mk := func(context.Context) (*player.Outline, error) { return &player.Outline{}, nil }
	for i := range maxOutlines {
		if _, err := c.get(context.Background(), strconv.Itoa(i), mk); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.inUse(); got != one*maxOutlines {
		t.Fatalf("%d cached outlines hold %d bytes, want %d", maxOutlines, got, one*maxOutlines)
	}
	// One more evicts the oldest and takes its place.
	c.get(context.Background(), "new", mk)
	if got := b.inUse(); got != one*maxOutlines {
		t.Fatalf("after an eviction %d bytes held, want %d", got, one*maxOutlines)
	}
	want := []string{"new"}
	for i := 1; i < maxOutlines; i++ {
		want = append(want, strconv.Itoa(i))
	}
	var kept []string
	for k := range c.m {
		kept = append(kept, k)
	}
	slices.Sort(want)
	slices.Sort(kept)
	if !slices.Equal(kept, want) || len(c.order) != maxOutlines || c.order[0] != "1" || c.order[maxOutlines-1] != "new" {
		t.Fatalf("after an eviction the cache holds %q in the order %q; want %q, 1 oldest and new newest", kept, c.order, want)
	}
	// The evicted key builds again; a kept one does not.
	var rebuilt atomic.Int32
	counted := func(context.Context) (*player.Outline, error) { rebuilt.Add(1); return &player.Outline{}, nil }
	c.get(context.Background(), "1", counted)
	if rebuilt.Load() != 0 {
		t.Fatal("a cached outline was built again")
	}
	c.get(context.Background(), "0", counted)
	if rebuilt.Load() != 1 {
		t.Fatal("the evicted outline was not built again")
	}
	// An outline that does not fit the budget is served but not kept: the next get builds again.
	small := newOutlineCache(&budget{limit: one - 1})
	var builds atomic.Int32
	count := func(context.Context) (*player.Outline, error) { builds.Add(1); return &player.Outline{}, nil }
	for range 2 {
		if o, err := small.get(context.Background(), "k", count); err != nil || o == nil {
			t.Fatalf("get past the budget: %v %v", o, err)
		}
	}
	if builds.Load() != 2 || small.budget.inUse() != 0 || len(small.m) != 0 {
		t.Fatalf("past the budget: %d builds, %d bytes held, %d cached; want 2, 0, 0",
			builds.Load(), small.budget.inUse(), len(small.m))
	}
}
