package webhooks

// EventID is eventID, for the external tests.
var EventID = eventID

// Envelope is envelope, for the external tests.
var Envelope = envelope
