package web

import (
	"net/http"
	"testing"
)

// TestSmallRefusals: requests the fuzz round answered 500 are the client's mistakes: a directory
// listing of a file, an exercise on a file of an image without files.
func TestSmallRefusals(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	for _, tt := range []struct {
		url  string
		want int
	}{
		{"/api/images/demo/dir?path=/seed/bench64.bin", http.StatusBadRequest},
		{"/api/images/demo/dir?path=/", http.StatusOK},
	} {
		var body errorBody
		if code := ts.get(t, tt.url, &body); code != tt.want {
			t.Errorf("%s: %d %q, want %d", tt.url, code, body.Error, tt.want)
		}
	}
}
