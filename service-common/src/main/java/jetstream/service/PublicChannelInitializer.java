package jetstream.service;

import io.netty.channel.Channel;

/**
 * A bean that prepares each connection accepted on a service's public listener (never the management
 * interface) before Vert.x configures it and before its first byte is read: the only point where a
 * handler can see a request from its first byte. {@link HeaderDeadlineInstaller} calls every such bean
 * for each accepted channel, on the acceptor's thread, after putting the header deadline first.
 */
public interface PublicChannelInitializer {
    /** Called once per accepted channel; typically {@code child.pipeline().addFirst(...)}. */
    void accepted(Channel child);
}
