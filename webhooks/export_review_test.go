package webhooks

// EventID is eventID, for the external tests.
var EventID = eventID
