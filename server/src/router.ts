import { adminRouter } from './admin/admin.router.ts';
import { authRouter } from './modules/auth/auth.router.ts';
import { channelsRouter } from './modules/channels/channels.router.ts';
import { notificationsRouter } from './modules/notifications/notifications.router.ts';
import { sitesRouter } from './modules/sites/sites.router.ts';
import { router } from './trpc/procedures.ts';

export const appRouter = router({
  auth: authRouter,
  sites: sitesRouter,
  channels: channelsRouter,
  notifications: notificationsRouter,
  admin: adminRouter,
});

export type AppRouter = typeof appRouter;
