import { Initial1795350083586 } from './1795350083586-initial';
import { FrontendChatIds1795410348852 } from './1795410348852-frontend-chat-ids';

/** Every committed migration, oldest first. Never edit one that has landed; add a new one. */
export const MIGRATIONS = [Initial1795350083586, FrontendChatIds1795410348852];
