package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// budget is the server's memory budget: work that holds memory (a viewer's player, a run's outline,
// a large JSON answer) reserves an estimate of it first, and is refused with 503 and Retry-After when
// the budget is spent, instead of the server growing until the kernel kills it.
type budget struct {
	mu    sync.Mutex
	limit int64
	used  int64
	high  int64 // the most reserved at once since the tests last asked (budget_helpers_test.go)
}

// retryAfter is what a refused client is told to wait.
const retryAfter = 5 * time.Second

// reserve takes n bytes of the budget and returns the function that gives them back (safe to call
// more than once), or an *Error: EUNAVAILABLE (503, Retry-After) when the budget is in use now,
// ETOOLARGE (413) when n passes the whole budget, which no wait can fix (issue 37: such a request
// was told to retry in 5 s, after seconds of CPU).
func (b *budget) reserve(n int64) (func(), error) {
	n = max(n, 0)
	if err := b.fits(n); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.limit > 0 && b.used+n > b.limit {
		return nil, &Error{Code: EUNAVAILABLE, RetryAfter: retryAfter, Message: fmt.Sprintf("the server is busy: this needs about %s of memory and %s of its %s budget is in use; try again in %s",
			mib(n), mib(b.used), mib(b.limit), retryAfter)}
	}
	b.used += n
	b.high = max(b.high, b.used)
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			b.used -= n
			b.mu.Unlock()
		})
	}, nil
}

// fits refuses work of n bytes larger than the whole budget (ETOOLARGE, 413), saying by how much:
// callers ask it, through reserve, before they compute anything.
func (b *budget) fits(n int64) error {
	if b == nil || b.limit <= 0 || n <= b.limit {
		return nil
	}
	return &Error{Code: ETOOLARGE, Message: fmt.Sprintf("too large for this server: this needs about %s of memory, %s more than its whole %s budget (--max-memory), so it can never run here; ask for less (a shorter range, fewer or smaller before= operations, one mode) or run zrviz with a larger --max-memory",
		mib(n), mib(n-b.limit), mib(b.limit))}
}

func mib(n int64) string { return strconv.FormatInt((n+(1<<20)-1)>>20, 10) + " MiB" }

// take charges n bytes unless that would pass the limit (with force: even then), reporting whether
// it did. It allocates nothing, for the hot paths (a connection's queue); a nil budget takes all.
func (b *budget) take(n int64, force bool) bool {
	if b == nil || n <= 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !force && b.limit > 0 && b.used+n > b.limit {
		return false
	}
	b.used += n
	b.high = max(b.high, b.used)
	return true
}

// give returns n bytes taken with take.
func (b *budget) give(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// Heavy work (an outline's lockstep pass, a run API simulation, a sandbox list) runs at most
// maxHeavy at once, whatever the budget says: each holds a core for seconds, and a reservation per
// request is too coarse to stop a dozen of them from starving the rest. A request waits for a slot
// (its context bounds the wait) unless maxHeavyWaiting already wait: then it is refused with 503.
const (
	maxHeavy        = 2
	maxHeavyWaiting = 8
)

// heavySlots is the semaphore of heavy work.
type heavySlots struct {
	slots   chan struct{}
	mu      sync.Mutex
	waiting int
}

func newHeavySlots() *heavySlots { return &heavySlots{slots: make(chan struct{}, maxHeavy)} }

// heavyWork takes a slot for heavy work, waiting while ctx lasts; done gives it back.
func (s *Server) heavyWork(ctx context.Context) (done func(), err error) {
	h := s.heavy
	release := func() { <-h.slots }
	select {
	case h.slots <- struct{}{}:
		return release, nil
	default:
	}
	h.mu.Lock()
	if h.waiting >= maxHeavyWaiting {
		h.mu.Unlock()
		return nil, &Error{Code: EUNAVAILABLE, RetryAfter: retryAfter, Message: fmt.Sprintf(
			"the server is busy: %d simulations run and %d wait, its limit; try again in %s", maxHeavy, h.waiting, retryAfter)}
	}
	h.waiting++
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.waiting--
		h.mu.Unlock()
	}()
	select {
	case h.slots <- struct{}{}:
		return release, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// MemoryInUse is the part of the memory budget (Config.MaxMemory) reserved now: what the work in
// progress, the cached outlines and the queued replies are counted as holding. zrviz serve reports it
// when it shuts down; the reliability tests hold it against the heap the same work grows by.
func (s *Server) MemoryInUse() int64 {
	s.budget.mu.Lock()
	defer s.budget.mu.Unlock()
	return s.budget.used
}

// reserveHeavy reserves n bytes of the budget and a slot of heavy work (waiting while ctx lasts);
// done gives back both.
func (s *Server) reserveHeavy(ctx context.Context, n int64) (done func(), err error) {
	release, err := s.budget.reserve(n)
	if err != nil {
		return nil, err
	}
	slot, err := s.heavyWork(ctx)
	if err != nil {
		release()
		return nil, err
	}
	return func() { slot(); release() }, nil
}

// retryAfterHeader tells a client refused for the budget or the heavy-work cap (an EUNAVAILABLE
// *Error naming its wait, or another 503) when to come back, reporting whether it did: such a refusal is the server keeping
// its bounds, not a fault to log as one.
func retryAfterHeader(w http.ResponseWriter, err error, code int) bool {
	var we *Error
	switch {
	case errors.As(err, &we) && we.Code == EUNAVAILABLE && we.RetryAfter > 0:
		w.Header().Set("Retry-After", strconv.Itoa(int(we.RetryAfter.Seconds())))
	case code == http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter.Seconds())))
	default:
		return false
	}
	return true
}
