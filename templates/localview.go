package templates

// LocalMissingPage is the data of [LocalMissing].
type LocalMissingPage struct {
	Layout
	ID          string // the permalink's image id, "local-" and the fingerprint
	Fingerprint string // the first 16 hex digits of the file's imgio.Fingerprint
}
