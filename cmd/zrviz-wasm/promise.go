//go:build js && wasm

package main

import (
	"fmt"
	"syscall/js"
)

// newPromise returns a JavaScript Promise settled by work, run on a goroutine of its own so that
// it may block on other Promises (a js.Func callback must return before the event loop runs them).
func newPromise(work func() (any, error)) js.Value {
	var executor js.Func
	executor = js.FuncOf(func(_ js.Value, args []js.Value) any {
		resolve, reject := args[0], args[1]
		go func() {
			var v any
			err := func() (err error) {
				// A panic would end the worker's Go program, and every page with it: the
				// request fails instead, saying so.
				defer func() {
					if p := recover(); p != nil {
						err = fmt.Errorf("zrviz-wasm: internal error: %v", p)
					}
				}()
				v, err = work()
				return err
			}()
			if err != nil {
				reject.Invoke(js.Global().Get("Error").New(err.Error()))
				return
			}
			resolve.Invoke(v)
		}()
		return nil
	})
	// The executor runs synchronously inside the constructor; it is not needed after.
	p := js.Global().Get("Promise").New(executor)
	executor.Release()
	return p
}
