package jetstream.gateway;

/** The two stream wires; each event is rendered (and compressed) at most once per wire. */
public enum Wire {
    V1, V2
}
