package jetstream.gateway;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import io.netty.channel.Channel;
import io.quarkus.arc.Unremovable;
import jetstream.service.PublicChannelInitializer;

/** Puts a {@link HeadBudget} in every connection of the public listener, before Vert.x's handlers. */
@ApplicationScoped
@Unremovable
public class HeadBudgetInstaller implements PublicChannelInitializer {
    @Inject
    Gateway gateway;

    private volatile StateBudget budget;
    private volatile Runnable refused;
    /** Vert.x's request-line limit, whose whole a large head is charged for until its line ends. */
    @ConfigProperty(name = "quarkus.http.limits.max-initial-line-length", defaultValue = "4096")
    int lineLimit;

    @Override
    public void accepted(Channel child) {
        if (budget == null) {
            refused = () -> gateway.metrics().stateRefused.increment(); // the warm-up's scratch count while it runs
            budget = gateway.stateBudget();
        }
        // Behind the header deadline, which so sees a head's first byte and starts its clock at once, even while
        // the budget keeps an unfinished request line from the decoder.
        child.pipeline().addLast(HeadBudget.NAME, new HeadBudget(budget, refused, lineLimit));
    }
}
