package webhooks_test

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/openapi"
	"github.com/podiumhq/podium/webhooks"
)

var spec = sync.OnceValues(func() (*openapi3.T, error) {
	b, _, err := openapi.JSON()
	if err != nil {
		return nil, err
	}
	return openapi3.NewLoader().LoadFromData(b)
})

// fitsSpec checks that the body of a delivery of d's event fits the
// OpenAPI spec's webhook of its type.
func fitsSpec(t *testing.T, d podium.WebhookDelivery) {
	t.Helper()
	doc, err := spec()
	if err != nil {
		t.Fatal(err)
	}
	hook := doc.Webhooks[d.Event.Type]
	if hook == nil || hook.Post == nil {
		t.Fatalf("the spec has no webhook %s", d.Event.Type)
	}
	s := hook.Post.RequestBody.Value.Content.Get("application/json").Schema.Value
	var body any
	if err := json.Unmarshal(webhooks.Envelope(&d.Event), &body); err != nil {
		t.Fatal(err)
	}
	if err := s.VisitJSON(body, openapi3.EnableJSONSchema2020()); err != nil {
		t.Fatalf("a %s body does not fit the spec: %v\n%s", d.Event.Type, err, webhooks.Envelope(&d.Event))
	}
}

// TestTypesInSpec: every event type an endpoint may take is a webhook of
// the spec and a value of its WebhookTypes.
func TestTypesInSpec(t *testing.T) {
	doc, err := spec()
	if err != nil {
		t.Fatal(err)
	}
	items := doc.Components.Schemas["WebhookTypes"].Value
	for _, typ := range webhooks.Types {
		if doc.Webhooks[typ] == nil {
			t.Errorf("the spec has no webhook %s", typ)
		}
		if !slices.Contains(items.Items.Value.Enum, any(typ)) {
			t.Errorf("WebhookTypes does not list %s", typ)
		}
	}
	if items.MaxItems == nil || *items.MaxItems != uint64(len(webhooks.Types)) {
		t.Errorf("WebhookTypes.maxItems = %v, want %d", items.MaxItems, len(webhooks.Types))
	}
}
