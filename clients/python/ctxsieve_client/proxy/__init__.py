"""`ctxsieve proxy`: ctxsieve in front of the model API. Any agent that lets its user set the API's base URL sends
its requests through it; each large tool result in them reaches the model as the part the current step needs and
a placeholder, old ones are cleared by the compaction rule, and the answer comes back untouched."""
