package web

import (
	"context"
	"time"
)

// Controls are taken at most controlRate a second after a burst of controlBurst: a seek costs up to a
// millisecond of engine time, and one client flooding seeks must not slow every other viewer. Excess
// controls wait unread in that client's socket, so TCP pushes back on it alone.
const (
	controlRate  = 50.0
	controlBurst = 50.0
)

// controlLimiter is a token bucket for one connection's controls; only its reader goroutine uses it.
type controlLimiter struct {
	tokens float64
	last   time.Time
}

// wait takes a token, sleeping until one is there.
func (l *controlLimiter) wait(ctx context.Context) error {
	now := time.Now()
	if l.last.IsZero() {
		l.tokens = controlBurst
	} else {
		l.tokens = min(controlBurst, l.tokens+now.Sub(l.last).Seconds()*controlRate)
	}
	l.last = now
	if l.tokens >= 1 {
		l.tokens--
		return nil
	}
	t := time.NewTimer(time.Duration((1 - l.tokens) / controlRate * float64(time.Second)))
	defer t.Stop()
	select {
	case <-t.C:
		l.tokens, l.last = 0, time.Now()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
