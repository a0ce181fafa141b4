// What the cost plugin collection benchmark's plugin process loads (bundled as the apps are): the kit.
export { serveCostDataSource } from '@platform/plugin-kit';
