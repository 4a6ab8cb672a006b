import { Initial1795348695511 } from './1795348695511-initial';

/** Every committed migration, oldest first. Never edit one that has landed; add a new one. */
export const MIGRATIONS = [Initial1795348695511];
