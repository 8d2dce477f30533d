package templates

// SurveyPage is the survey of one image (GET /images/{id}/survey): the page is a frame the script
// (static/js/survey.js) fills from GET /api/images/{id}/survey once the survey is done.
type SurveyPage struct {
	Layout
	ID, Name string
	// The estimated time's default costs and where they come from (survey.DefaultCosts).
	PerCallMicros, PerBlockMicros float64
	CostSource                    string
	Buckets                       int
}
