package metadata

// NewDelegationTokenID draws a delegation token id as Kafka does
// (Uuid.randomUuid().toString()).
func NewDelegationTokenID() string { return newUUIDString() }
