package jetstream.gateway;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import io.netty.channel.Channel;
import io.quarkus.arc.Unremovable;
import jetstream.service.PublicChannelInitializer;

/** Puts a {@link HeadBudget} first in every connection of the public listener. */
@ApplicationScoped
@Unremovable
public class HeadBudgetInstaller implements PublicChannelInitializer {
    @Inject
    Gateway gateway;

    private volatile StateBudget budget;
    private volatile Runnable refused;

    @Override
    public void accepted(Channel child) {
        if (budget == null) {
            refused = gateway.metrics().stateRefused::increment;
            budget = gateway.stateBudget();
        }
        child.pipeline().addFirst(HeadBudget.NAME, new HeadBudget(budget, refused));
    }
}
