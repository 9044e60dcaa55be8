using System.Runtime.CompilerServices;

// The tests reach the retry policy's decision table (RequestKind) directly.
[assembly: InternalsVisibleTo("Podium.Tests")]
